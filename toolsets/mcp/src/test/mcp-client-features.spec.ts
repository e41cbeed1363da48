/**
 * Client features against the test fixture server (the server-everything tests are in
 * mcp-everything.spec.ts): list-changed notifications of resources, an elicitation handler that
 * fails, and a task-only tool run through the task API and cancelled.
 */
import { expect } from 'chai';
import { textPart } from '@kosong/core';
import { McpToolset, mcpResourceParts, type McpServerConfig, type McpToolsetOptions } from '../index.js';
import { callTool, FIXTURE, killLeftovers, startHttpFixture, stdioServer, textOf, waitFor, type HttpFixture } from './support.js';

describe('McpToolset client features (fixture server)', function () {
  this.timeout(20_000);
  let http: HttpFixture;
  const opened: McpToolset[] = [];

  async function open(server: McpServerConfig, options: Omit<McpToolsetOptions, 'server'> = {}): Promise<McpToolset> {
    const toolset = new McpToolset({ name: 'fixture', server, ...options });
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
    const server = (): McpServerConfig => (kind === 'stdio' ? stdioServer() : http.config);

    it(`over ${kind}: resources/list_changed reaches onListChanged; the next listing has the new resource`, async () => {
      const lists: string[] = [];
      const toolset = await open(server(), { onListChanged: (list) => lists.push(list) });
      expect((await toolset.listResources()).map((r) => r.uri)).to.deep.equal(['fixture://notes']);
      await callTool(toolset, 'add_resource', { name: 'fresh' });
      await waitFor('the list_changed notification', () => lists.includes('resources'));
      expect((await toolset.listResources()).map((r) => r.uri)).to.deep.equal(['fixture://notes', 'fixture://fresh']);
      expect(mcpResourceParts(await toolset.readResource('fixture://fresh'))).to.deep.equal([textPart('[Resource fixture://fresh (text/plain)]\nfresh body')]);
    });

    it(`over ${kind}: an elicitation handler that throws: reported to onError, the server gets an error`, async () => {
      const errors: Error[] = [];
      const toolset = await open(server(), {
        onError: (error) => errors.push(error),
        elicitation: () => {
          throw new Error('no terminal');
        },
      });
      const { returnValue } = await callTool(toolset, 'ask_user');
      expect(returnValue.isError).to.equal(true);
      expect(JSON.stringify(returnValue)).to.contain("the client's elicitation handler failed: no terminal");
      expect(errors.map((e) => e.message)).to.deep.equal(['MCP server "fixture": elicitation threw: no terminal']);
    });
  }

  it('a task-only tool runs through the task API; an abort settles the call at once and cancels the task (tasks/cancel)', async () => {
    const toolset = await open({ ...stdioServer(), args: [FIXTURE, 'stdio', 'tasks'] });
    expect(toolset.tools.map((t) => t.name)).to.include('slow_task');
    expect(textOf((await callTool(toolset, 'slow_task', { ms: 50 })).returnValue)).to.equal('task waited 50 ms');

    const controller = new AbortController();
    const pending = callTool(toolset, 'slow_task', { ms: 60_000 }, controller.signal);
    await waitFor('the second task', async () => JSON.parse(textOf((await callTool(toolset, 'task_statuses')).returnValue)).length === 2);
    controller.abort(new Error('the user stopped'));
    const { returnValue } = await pending;
    expect(returnValue.message).to.match(/^Tool `slow_task` was cancelled/);
    const statuses = await waitFor('the task to be cancelled', async () => {
      const seen = JSON.parse(textOf((await callTool(toolset, 'task_statuses')).returnValue)) as string[];
      return seen[1] === 'cancelled' && seen;
    });
    expect(statuses).to.deep.equal(['completed', 'cancelled']);
  });

  it('a server that refuses logging/setLevel still serves its tools; the refusal goes to onError', async () => {
    const errors: Error[] = [];
    const toolset = await open({ ...stdioServer(), args: [FIXTURE, 'stdio', 'bad-logging'] }, { logLevel: 'info', onError: (error) => errors.push(error) });
    expect(textOf((await callTool(toolset, 'echo', { text: 'fine' })).returnValue)).to.equal('fine');
    expect(errors.map((e) => e.message)).to.deep.equal(['MCP server "fixture": logging/setLevel info failed: MCP error -32602: MCP error -32602: no levels here']);
  });
});
