import { expect } from 'chai';
import { definePlugin, Kernel, PluginError, textPart, toolCall, type ChatProvider, type StepHooks } from '@kosong/core';
import { inject, injectable, named } from '@kosong/core/kernel';
import { MockChatProvider } from '@kosong/provider-echo';
import { McpToolset, mcpPlugin } from '../index.js';
import { isAlive, killLeftovers, startHttpFixture, statsOf, stdioServer, type HttpFixture } from './support.js';

const history = [{ role: 'user' as const, content: [textPart('add 2 and 3')] }];

function providerPlugin(provider: ChatProvider) {
  return definePlugin({ name: 'mock', setup: (context) => context.bindChatProvider('mock', provider) });
}

describe('mcpPlugin', () => {
  const kernels: Kernel[] = [];
  let http: HttpFixture | undefined;

  afterEach(async () => {
    await Promise.all(kernels.splice(0).map((k) => k.dispose()));
  });

  after(async () => {
    await http?.kill();
    expect(killLeftovers(), 'fixture processes left alive').to.deep.equal([]);
  });

  it('connects in setup, serves a step as the global toolset, and ends the server on dispose', async () => {
    const provider = new MockChatProvider([textPart('adding'), toolCall('c1', 'fx_add', '{"a": 2, "b": 3}')]);
    const mcp = mcpPlugin({ name: 'fixture', server: stdioServer(), prefix: 'fx_' });
    const kernel = new Kernel();
    kernels.push(kernel);
    await kernel.use(providerPlugin(provider), mcp);
    expect(kernel.plugins()).to.deep.equal(['mock', 'fixture']);
    expect(mcp.toolset.connected).to.equal(true);

    const result = await kernel.runner().step({ systemPrompt: 'You add.', history });
    expect(provider.lastRequest!.tools.map((t) => t.name)).to.include('fx_add');
    const [added] = await result.toolResults();
    expect(added).to.deep.equal({ toolCallId: 'c1', returnValue: { isError: false, output: [textPart('5')], message: '', display: [] } });

    const { pid } = await statsOf(mcp.toolset, 'fx_stats');
    await kernel.dispose();
    expect(mcp.toolset.closed).to.equal(true);
    expect(isAlive(pid), `server process ${pid} still alive after dispose()`).to.equal(false);
  });

  it('with bindToolset: false, only connects and closes; the toolset can be given to a tenant', async () => {
    http = await startHttpFixture();
    const provider = new MockChatProvider([toolCall('c1', 'add', '{"a": 1, "b": 1}')]);
    const mcp = mcpPlugin({ name: 'fixture', server: http.config, bindToolset: false });
    const kernel = new Kernel();
    kernels.push(kernel);
    await kernel.use(providerPlugin(provider), mcp);
    kernel.tenants.define('acme', { toolset: mcp.toolset });

    const global = await kernel.runner().step({ systemPrompt: 'You add.', history });
    expect(provider.lastRequest!.tools).to.deep.equal([]);
    expect((await global.toolResults())[0]!.returnValue.message).to.equal('Tool `add` not found');

    const tenant = await kernel.runner({ tenant: 'acme' }).step({ systemPrompt: 'You add.', history });
    expect(provider.lastRequest!.tools.map((t) => t.name)).to.include('add');
    expect((await tenant.toolResults())[0]!.returnValue.output).to.deep.equal([textPart('2')]);

    const before = await statsOf(mcp.toolset);
    await kernel.dispose();
    expect(mcp.toolset.closed).to.equal(true);
    const probe = mcpPlugin({ name: 'probe', server: http.config }).toolset;
    try {
      expect((await statsOf(probe)).sessionsClosed, 'the session was deleted').to.equal(before.sessionsClosed + 1);
    } finally {
      await probe.close();
    }
  });

  it('a server that cannot start fails the use call with a PluginError naming the plugin', async () => {
    const kernel = new Kernel();
    kernels.push(kernel);
    const error = await kernel.use(mcpPlugin({ name: 'ghost', server: { type: 'stdio', command: 'kosong-no-such-command' } })).then(
      () => expect.fail('use should fail'),
      (e: unknown) => e,
    );
    expect(PluginError.isInstance(error), String(error)).to.equal(true);
    expect((error as PluginError).plugin).to.equal('ghost');
    expect((error as Error).message).to.match(/^Plugin "ghost": setup failed: MCP server "ghost": cannot connect: .*ENOENT/);
    expect(kernel.plugins()).to.deep.equal([]);
  });

  it('closes the server through its binding\'s deactivation when a later plugin of the same use call fails', async () => {
    const mcp = mcpPlugin({ name: 'fixture', server: stdioServer(), prefix: 'fx_' });
    const kernel = new Kernel();
    kernels.push(kernel);
    let pid: number | undefined;
    const failing = definePlugin({
      name: 'failing',
      requires: ['fixture'],
      async setup() {
        pid = (await statsOf(mcp.toolset, 'fx_stats')).pid;
        throw new Error('later plugin failed');
      },
    });
    const error = await kernel.use(mcp, failing).then(
      () => expect.fail('use should fail'),
      (e: unknown) => e,
    );
    expect(error).to.include({ plugin: 'failing', reason: 'setup-failed' });
    expect(mcp.toolset.closed).to.equal(true);
    expect(isAlive(pid!), `server process ${pid} still alive after the failed use`).to.equal(false);
  });

  it('is a service: a class can inject the toolset of a server by its name', async () => {
    const injected: McpToolset[] = [];
    @injectable()
    class UsesFixture implements StepHooks {
      constructor(@inject(McpToolset) @named('fixture') toolset: McpToolset) {
        injected.push(toolset);
      }
      onStepStart(): void {}
    }
    const mcp = mcpPlugin({ name: 'fixture', server: stdioServer(), prefix: 'fx_', bindToolset: false });
    const kernel = new Kernel();
    kernels.push(kernel);
    await kernel.use(mcp, definePlugin({ name: 'user', requires: ['fixture'], setup: (ctx) => ctx.bindHooks(UsesFixture) }));
    expect(injected).to.deep.equal([mcp.toolset]);
    expect(injected[0]).to.equal(mcp.toolset);
  });
});
