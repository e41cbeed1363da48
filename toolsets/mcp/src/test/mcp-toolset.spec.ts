import { getEventListeners } from 'node:events';
import { expect } from 'chai';
import { imageURLPart, textPart, type Tool } from '@kosong/core';
import { McpConnectionError, McpToolset, MCP_TOOL_ERROR_MESSAGE, type McpServerConfig, type McpToolsetOptions } from '../index.js';
import { RED_DOT_PNG } from './fixtures/red-dot.js';
import {
  callTool,
  fixtureChildren,
  isAlive,
  killLeftovers,
  startHttpFixture,
  statsOf,
  stdioServer,
  textOf,
  waitFor,
  type HttpFixture,
} from './support.js';

/** How long an abort or a crash may take to settle a call. */
const PROMPTLY_MS = 1500;

describe('McpToolset', () => {
  /** The HTTP fixture of this file (restarted on the same port after the kill test). */
  let http: HttpFixture;
  /** Toolsets a test opened; closed after each test (close is idempotent). */
  const opened: McpToolset[] = [];

  async function open(options: McpToolsetOptions): Promise<McpToolset> {
    const toolset = new McpToolset(options);
    opened.push(toolset);
    await toolset.connect();
    return toolset;
  }

  before(async () => {
    http = await startHttpFixture();
  });

  afterEach(async () => {
    await Promise.all(opened.splice(0).map((t) => t.close()));
  });

  after(async () => {
    await http?.kill();
    expect(killLeftovers(), 'fixture processes left alive').to.deep.equal([]);
  });

  for (const kind of ['stdio', 'http'] as const) {
    describe(`over ${kind}`, () => {
      const server = (): McpServerConfig => (kind === 'stdio' ? stdioServer() : http.config);
      /** A connected toolset shared by this suite (the kill test kills its server; it reconnects). */
      let shared: McpToolset;
      /** Background errors of `shared`. */
      const errors: McpConnectionError[] = [];
      /** Where `shared` reports tool-list changes. */
      let onToolsChanged: ((tools: readonly Tool[]) => void) | undefined;

      before(async () => {
        shared = new McpToolset({
          name: 'fixture',
          server: server(),
          onError: (e) => errors.push(e),
          onToolsChanged: (tools) => onToolsChanged?.(tools),
        });
        await shared.connect();
      });

      after(async () => {
        await shared?.close();
      });

      it('lists the server tools on connect, with kosong descriptions and the input schemas', () => {
        const names = shared.tools.map((t) => t.name);
        expect(names).to.include.members(['echo', 'add', 'image', 'fail', 'slow', 'stats', 'add_tool']);
        const echo = shared.tools.find((t) => t.name === 'echo')!;
        expect(echo.description).to.equal('This is an MCP (Model Context Protocol) tool from MCP server `fixture`.\n\nEchoes the text.');
        expect(echo.parameters).to.deep.include({ type: 'object', required: ['text'] });
        expect(echo.parameters['properties']).to.deep.equal({ text: { type: 'string' } });
        expect(shared.connected).to.equal(true);
      });

      it('calls a tool and returns its text', async () => {
        const result = await callTool(shared, 'add', { a: 2, b: 40 });
        expect(result.returnValue).to.deep.equal({ isError: false, output: [textPart('42')], message: '', display: [] });
        expect(result.toolCallId).to.match(/^call-/);
      });

      it('returns image results as data: URL image parts', async () => {
        const { returnValue } = await callTool(shared, 'image');
        expect(returnValue.isError).to.equal(false);
        expect(returnValue.output).to.deep.equal([textPart('a red dot'), imageURLPart(`data:image/png;base64,${RED_DOT_PNG}`)]);
      });

      it('converts audio, blob and text resources and resource links; nothing is unsupported', async () => {
        const { returnValue } = await callTool(shared, 'mixed');
        expect(returnValue.output).to.deep.equal([
          textPart('text'),
          { type: 'audio_url', audioUrl: { url: 'data:audio/wav;base64,AAAA' } },
          textPart('[Resource file:///v.mp4 (video/mp4, 3 bytes): binary content not shown]'),
          textPart('[Resource file:///notes.txt (text/plain)]\nnotes'),
          textPart('[Resource link: cat <https://example.com/cat.png> (image/png)]'),
        ]);
      });

      it('truncates output over the 100 000 character budget, with the note', async () => {
        const { returnValue } = await callTool(shared, 'big', { chars: 150_000 });
        const parts = returnValue.output as readonly { text: string }[];
        expect(parts).to.have.length(2);
        expect(parts[0]!.text).to.have.length(100_000);
        expect(parts[1]!.text).to.contain('[Output truncated: exceeded 100000 character limit.');
      });

      it('gives isError results as error results with the spec message and the server text as output', async () => {
        const failed = await callTool(shared, 'fail', { message: 'disk full' });
        expect(failed.returnValue).to.deep.equal({ isError: true, output: [textPart('disk full')], message: MCP_TOOL_ERROR_MESSAGE, display: [] });
        const threw = await callTool(shared, 'throws');
        expect(threw.returnValue.isError).to.equal(true);
        expect(textOf(threw.returnValue)).to.equal('boom');
      });

      it('gives error results for bad calls', async () => {
        const notFound = await callTool(shared, 'nope');
        expect(notFound.returnValue).to.deep.include({ isError: true, message: 'Tool `nope` not found' });

        const notJson = await callTool(shared, 'echo', '{"text": ');
        expect(notJson.returnValue.isError).to.equal(true);
        expect(notJson.returnValue.message).to.match(/^Error parsing JSON arguments: /);

        const notObject = await callTool(shared, 'echo', '[1, 2]');
        expect(notObject.returnValue.message).to.equal('Error validating JSON arguments: the arguments must be a JSON object, not an array');

        const wrongType = await callTool(shared, 'echo', { text: 42 }); // validated by the server
        expect(wrongType.returnValue.isError).to.equal(true);
        expect(textOf(wrongType.returnValue)).to.match(/Input validation error/);

        const rawNewline = await callTool(shared, 'echo', '{"text": "two\nlines"}'); // tolerated, as by the original
        expect(textOf(rawNewline.returnValue)).to.equal('two\nlines');

        const noArguments = await callTool(shared, 'stats', null);
        expect(noArguments.returnValue.isError).to.equal(false);
      });

      it('refreshes the tools on tools/list_changed', async () => {
        const changed = new Promise<readonly Tool[]>((resolve) => (onToolsChanged = resolve));
        expect(shared.tools.map((t) => t.name)).not.to.include('late_tool');

        const added = await callTool(shared, 'add_tool', { name: 'late_tool' });
        expect(textOf(added.returnValue)).to.equal('added late_tool');
        const tools = await changed;
        expect(tools.map((t) => t.name)).to.include('late_tool');
        expect(shared.tools).to.equal(tools);
        expect(shared.tools.find((t) => t.name === 'late_tool')!.description).to.contain('Added at run time.');
        expect(textOf((await callTool(shared, 'late_tool')).returnValue)).to.equal('late_tool ran');
      });

      it('an abort mid-call cancels it on the server and settles the call at once', async () => {
        const before = await statsOf(shared);
        const controller = new AbortController();
        const pending = callTool(shared, 'slow', { ms: 20_000 }, controller.signal);
        await waitFor('the slow call to start', async () => (await statsOf(shared)).running === 1);

        const abortedAt = performance.now();
        controller.abort(new Error('user pressed stop'));
        const { returnValue } = await pending;
        expect(performance.now() - abortedAt).to.be.below(PROMPTLY_MS);
        expect(returnValue).to.deep.include({ isError: true, message: 'Tool `slow` was cancelled: user pressed stop' });

        const after = await waitFor('the server to observe the cancellation', async () => {
          const stats = await statsOf(shared);
          return stats.cancelled.length > before.cancelled.length && stats;
        });
        expect(after.cancelled.at(-1)!.reason).to.contain('user pressed stop');
        expect(after.running).to.equal(0);
        expect(textOf((await callTool(shared, 'echo', { text: 'still up' })).returnValue)).to.equal('still up');
      });

      it('calls sharing one signal (as in a step) run concurrently and are all cancelled by one abort', async () => {
        const warnings: Error[] = [];
        const onWarning = (warning: Error): void => void warnings.push(warning);
        process.on('warning', onWarning);
        try {
          const before = await statsOf(shared);
          const controller = new AbortController();
          const pending = Array.from({ length: 15 }, () => callTool(shared, 'slow', { ms: 20_000 }, controller.signal));
          await waitFor('all calls to run', async () => (await statsOf(shared)).running === 15);
          expect(getEventListeners(controller.signal, 'abort'), 'one listener on the shared signal').to.have.length(1);

          controller.abort(new Error('step aborted'));
          const results = await Promise.all(pending);
          expect(results.every((r) => r.returnValue.message === 'Tool `slow` was cancelled: step aborted')).to.equal(true);
          await waitFor('the server to observe every cancellation', async () => {
            const stats = await statsOf(shared);
            return stats.running === 0 && stats.cancelled.length === before.cancelled.length + 15;
          });

          const done = new AbortController();
          await Promise.all(Array.from({ length: 15 }, (_, i) => callTool(shared, 'add', { a: i, b: 0 }, done.signal)));
          expect(getEventListeners(done.signal, 'abort').length, 'no listener per finished call').to.be.at.most(1);
          expect(warnings.map((w) => w.name)).not.to.include('MaxListenersExceededWarning');
        } finally {
          process.off('warning', onWarning);
        }
      });

      it('a call whose signal is already aborted does not reach the server', async () => {
        const before = await statsOf(shared);
        const { returnValue } = await callTool(shared, 'slow', { ms: 20_000 }, AbortSignal.abort(new Error('too late')));
        expect(returnValue.message).to.equal('Tool `slow` was cancelled: too late');
        const after = await statsOf(shared);
        expect(after.running).to.equal(0);
        expect(after.cancelled).to.deep.equal(before.cancelled);
      });

      it('a server killed mid-call gives an error result at once; the next calls reconnect (once)', async () => {
        const first = await statsOf(shared);
        const pending = callTool(shared, 'slow', { ms: 20_000 });
        await waitFor('the slow call to start', async () => (await statsOf(shared)).running === 1);

        const killedAt = performance.now();
        if (kind === 'http') await http.kill();
        else process.kill(first.pid, 'SIGKILL');
        const { returnValue } = await pending;
        expect(performance.now() - killedAt).to.be.below(PROMPTLY_MS);
        expect(returnValue.isError).to.equal(true);
        expect(returnValue.message).to.match(/^Error running tool: the MCP server `fixture` disconnected during the call/);
        await waitFor('the toolset to notice', () => !shared.connected);
        expect(errors.some((e) => McpConnectionError.isInstance(e) && /lost the connection/.test(e.message))).to.equal(true);
        expect(shared.tools.map((t) => t.name), 'the last known tools stay offered').to.include('echo');

        if (kind === 'http') {
          // Nobody listens now: a call fails with an error result, it does not hang.
          const down = await callTool(shared, 'echo', { text: 'anyone?' });
          expect(down.returnValue.message).to.match(/^Error running tool: MCP server "fixture": cannot connect/);
          http = await startHttpFixture(http.port);
        }
        const again = await Promise.all([1, 2, 3].map(() => statsOf(shared)));
        expect(new Set(again.map((s) => s.pid)).size, 'one reconnect for concurrent calls').to.equal(1);
        expect(again[0]!.pid).not.to.equal(first.pid);
        if (kind === 'http') expect(again[0]!.sessionsOpened).to.equal(1);
        expect(textOf((await callTool(shared, 'echo', { text: 'back' })).returnValue)).to.equal('back');
        expect(shared.connected).to.equal(true);
        expect(shared.tools.map((t) => t.name), 'the list of the new server').not.to.include('late_tool');
      });

      it('close() ends the process or session, is idempotent, and fails calls in flight and after', async () => {
        const toolset = await open({ name: 'closing', server: server() });
        const { pid } = await statsOf(toolset);
        const before = await statsOf(shared);
        const pending = callTool(toolset, 'slow', { ms: 20_000 });
        await waitFor('the slow call to start', async () => (await statsOf(toolset)).running === 1);

        const closing = toolset.close();
        expect(toolset.close()).to.equal(closing);
        const { returnValue } = await pending;
        expect(returnValue.message).to.equal('Error running tool: the MCP server `closing` was closed during the call');
        await closing;

        if (kind === 'stdio') {
          expect(isAlive(pid), `server process ${pid} still alive after close()`).to.equal(false);
        } else {
          const after = await statsOf(shared);
          expect(after.sessionsClosed, 'the session was deleted').to.equal(before.sessionsClosed + 1);
          expect(isAlive(pid), 'the HTTP server is not ours to stop').to.equal(true);
        }
        expect(toolset.closed).to.equal(true);
        expect(toolset.connected).to.equal(false);
        expect(toolset.tools).to.deep.equal([]);
        const late = await callTool(toolset, 'echo', { text: 'hello?' });
        expect(late.returnValue.message).to.equal('Error running tool: the MCP server `closing` is closed');
        await toolset.close();
      });

      if (kind === 'http') {
        it('a request over the time limit gives the timeout error result and is cancelled on the server', async () => {
          const toolset = await open({ name: 'impatient', server: server(), timeoutMs: 800 });
          const before = await statsOf(shared);
          const { returnValue } = await callTool(toolset, 'slow', { ms: 20_000 });
          expect(returnValue).to.deep.equal({
            isError: true,
            output: '',
            message: 'Timeout while calling MCP tool `slow`. You may explain to the user that the timeout config is set too low.',
            display: [{ type: 'brief', text: 'Timeout' }],
          });
          await waitFor('the server to observe the cancellation', async () => (await statsOf(shared)).cancelled.length > before.cancelled.length);
        });

        it('a session the server forgot is replaced, and the call runs in the new one', async () => {
          const toolset = await open({ name: 'forgetful', server: server() });
          const before = await statsOf(toolset);
          expect(textOf((await callTool(toolset, 'forget_sessions')).returnValue)).to.equal('forgotten');
          const { returnValue } = await callTool(toolset, 'echo', { text: 'new session' });
          expect(returnValue).to.deep.include({ isError: false });
          expect(textOf(returnValue)).to.equal('new session');
          // The fixture forgot every session; `shared` gets a new one too when it is next used.
          expect((await statsOf(toolset)).sessionsOpened).to.equal(before.sessionsOpened + 1);
        });
      }
    });
  }

  describe('options and failures', () => {
    it('offers prefixed, filtered tools (the first call connects) and calls the server by the real name', async () => {
      const toolset = new McpToolset({ name: 'fx', server: stdioServer(), prefix: 'fx_', filter: (tool) => tool.name !== 'secret' });
      opened.push(toolset);
      expect(toolset.tools).to.deep.equal([]);
      expect(textOf((await callTool(toolset, 'fx_echo', { text: 'lazy' })).returnValue)).to.equal('lazy');

      const names = toolset.tools.map((t) => t.name);
      expect(names).to.include.members(['fx_echo', 'fx_add', 'fx_stats']);
      expect(names).not.to.include('fx_secret');
      expect(names.every((n) => n.startsWith('fx_'))).to.equal(true);
      expect((await callTool(toolset, 'echo', { text: 'hi' })).returnValue.message).to.equal('Tool `echo` not found');
      expect((await callTool(toolset, 'fx_secret')).returnValue.message).to.equal('Tool `fx_secret` not found');
    });

    it('a list filter and a custom description; the default name is the host', async () => {
      const toolset = await open({ server: http.config, filter: ['echo', 'add'], describeTool: (tool, server) => `${server}/${tool.name}` });
      expect(toolset.name).to.equal(`127.0.0.1:${http.port}`);
      expect(toolset.tools.map((t) => [t.name, t.description])).to.deep.equal([
        ['echo', `127.0.0.1:${http.port}/echo`],
        ['add', `127.0.0.1:${http.port}/add`],
      ]);
    });

    it('refreshTools() lists again and applies the filter', async () => {
      const toolset = await open({ server: http.config, filter: (tool) => tool.name.startsWith('added_') || tool.name === 'add_tool' });
      expect(toolset.tools.map((t) => t.name)).to.deep.equal(['add_tool']);
      await callTool(toolset, 'add_tool', { name: 'added_one' });
      await callTool(toolset, 'add_tool', { name: 'ignored' });
      const tools = await toolset.refreshTools();
      expect(tools.map((t) => t.name)).to.deep.equal(['add_tool', 'added_one']);
    });

    it('connect() rejects with an McpConnectionError naming the server when it cannot start', async () => {
      const error = await McpToolset.connect({ name: 'ghost', server: { type: 'stdio', command: 'kosong-no-such-command' } }).then(
        () => expect.fail('connect should fail'),
        (e: unknown) => e,
      );
      expect(McpConnectionError.isInstance(error)).to.equal(true);
      expect((error as McpConnectionError).server).to.equal('ghost');
      expect((error as Error).message).to.match(/^MCP server "ghost": cannot connect: .*ENOENT/);
    });

    it('an unreachable HTTP server gives error results, never a rejection', async () => {
      const toolset = new McpToolset({ name: 'nobody', server: { type: 'http', url: 'http://127.0.0.1:9/mcp' } });
      opened.push(toolset);
      const { returnValue } = await callTool(toolset, 'echo', { text: 'hi' });
      expect(returnValue.isError).to.equal(true);
      expect(returnValue.message).to.match(/^Error running tool: MCP server "nobody": cannot connect/);
    });

    it('close() during connect() leaves no process behind', async () => {
      const before = fixtureChildren();
      const toolset = new McpToolset({ server: stdioServer() });
      expect(toolset.name).to.equal(process.execPath.split('/').pop());
      const connecting = toolset.connect().then(
        () => 'connected',
        (e: unknown) => e,
      );
      await waitFor('the server process to be spawned', () => fixtureChildren().length > before.length);
      await toolset.close();
      const outcome = await connecting;
      expect(McpConnectionError.isInstance(outcome), String(outcome)).to.equal(true);
      expect((outcome as Error).message).to.equal(`MCP server "${toolset.name}": the toolset was closed`);
      expect(toolset.connected).to.equal(false);
      expect(fixtureChildren()).to.deep.equal(before);
    });
  });
});
