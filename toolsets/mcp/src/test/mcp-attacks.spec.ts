/**
 * Servers that misbehave: one that dies mid-call, one that never answers, one that sends a huge
 * result, one that changes its tool list while a step runs, one that lists a task-only tool it
 * cannot run. Every case ends in an error result or a bounded result; nothing rejects or hangs,
 * and the toolset works again afterwards.
 */
import { expect } from 'chai';
import { createMessage, step, textPart, toolCall } from '@kosong/core';
import { MockChatProvider } from '@kosong/provider-echo';
import { McpMessageTooLargeError, McpToolset, type McpServerConfig, type McpToolsetOptions } from '../index.js';
import { callTool, killLeftovers, startHttpFixture, stdioServer, textOf, waitFor, type HttpFixture } from './support.js';

describe('McpToolset against servers that misbehave', function () {
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

  it('a server that exits mid-call: an error result at once, then the next call reconnects (stdio)', async () => {
    const errors: Error[] = [];
    const toolset = await open(stdioServer(), { onError: (error) => errors.push(error) });
    const { returnValue } = await callTool(toolset, 'crash', { ms: 100 });
    expect(returnValue.isError).to.equal(true);
    expect(returnValue.message).to.contain('the MCP server `fixture` disconnected during the call');
    expect(errors.map((e) => e.message).join('\n')).to.contain('lost the connection');
    const again = await callTool(toolset, 'echo', { text: 'back' });
    expect(textOf(again.returnValue)).to.equal('back');
  });

  for (const kind of ['stdio', 'http'] as const) {
    const server = (): McpServerConfig => (kind === 'stdio' ? stdioServer() : http.config);

    it(`over ${kind}: a call that never answers is reclaimed by its timeout, and by its signal`, async () => {
      const toolset = await open(server(), { timeoutMs: 1500 });
      const timedOut = await callTool(toolset, 'hang');
      expect(timedOut.returnValue).to.deep.include({ isError: true, message: 'Timeout while calling MCP tool `hang`. You may explain to the user that the timeout config is set too low.' });

      const controller = new AbortController();
      const pending = callTool(toolset, 'hang', {}, controller.signal);
      controller.abort(new Error('the user stopped'));
      const cancelled = await pending;
      expect(cancelled.returnValue.isError).to.equal(true);
      expect(cancelled.returnValue.message).to.match(/^Tool `hang` was cancelled/);
      // the connection is fine
      expect(textOf((await callTool(toolset, 'echo', { text: 'still here' })).returnValue)).to.equal('still here');
    });

    it(`over ${kind}: a 5 MB result is cut to the output budget, with the marker`, async () => {
      const toolset = await open(server(), { maxOutputChars: 10_000 });
      const { returnValue } = await callTool(toolset, 'big', { chars: 5_000_000 });
      expect(returnValue.isError, JSON.stringify(returnValue).slice(0, 500)).to.equal(false);
      const parts = returnValue.output as readonly { text: string }[];
      expect(parts).to.have.length(2);
      expect(parts[0]!.text).to.have.length(10_000);
      expect(parts[1]!.text).to.equal('\n\n[Output truncated: exceeded 10000 character limit. Use pagination or more specific queries to get remaining content.]');
    });

    it(`over ${kind}: a 50 MB message is refused past the message bound: an error result that says so, then the next call reconnects`, async function () {
      this.timeout(60_000); // the fixture builds and writes 50 MB
      const errors: Error[] = [];
      const toolset = await open(server(), { onError: (error) => errors.push(error) });
      const { returnValue } = await callTool(toolset, 'big', { chars: 50_000_000 });
      expect(returnValue.isError).to.equal(true);
      expect(returnValue.message).to.equal(
        'Error running tool: the MCP server `fixture` disconnected during the call (the tool may or may not have run; the next call reconnects): the server sent a message larger than 10485760 bytes (the client\'s limit); the connection was given up',
      );
      expect(errors.some((e) => McpMessageTooLargeError.isInstance(e.cause))).to.equal(true);
      expect(textOf((await callTool(toolset, 'echo', { text: 'again' })).returnValue)).to.equal('again');
    });

    it(`over ${kind}: the tool list changing mid-step: the step keeps its tools, a removed tool's call is the server's error result`, async () => {
      const changes: string[][] = [];
      const toolset = await open(server(), { onToolsChanged: (tools) => changes.push(tools.map((t) => t.name)) });
      await callTool(toolset, 'add_tool', { name: 'soon_gone' });
      await waitFor('soon_gone to be listed', () => toolset.tools.some((t) => t.name === 'soon_gone'));

      // The model answers slowly; while it streams, the server drops the tool and says so.
      const provider = new MockChatProvider([textPart('calling'), toolCall('c1', 'soon_gone', '{}'), toolCall('c2', 'echo', '{"text":"after"}')], { delayMs: 150 });
      const running = step({ provider, systemPrompt: '', toolset, history: [createMessage('user', 'go')] });
      await callTool(toolset, 'remove_tool', { name: 'soon_gone' });
      await waitFor('soon_gone to be dropped', () => !toolset.tools.some((t) => t.name === 'soon_gone'));
      const result = await running;
      const results = await result.toolResults();
      expect(results.map((r) => r.toolCallId)).to.deep.equal(['c1', 'c2']);
      const gone = results[0]!.returnValue;
      expect(gone.isError).to.equal(true);
      // sent to the server (the step started with it), which no longer knows it: not kosong's "not found"
      expect(JSON.stringify(gone)).to.contain('soon_gone').and.not.contain('Tool `soon_gone` not found');
      expect(textOf(results[1]!.returnValue)).to.equal('after');
      expect(changes.at(-1)).not.to.include('soon_gone');
      // the next step's tools are the new list; a call to the removed tool two listings later is kosong's "not found"
      await callTool(toolset, 'add_tool', { name: 'other' });
      await waitFor('other to be listed', () => toolset.tools.some((t) => t.name === 'other'));
      expect((await callTool(toolset, 'soon_gone')).returnValue.message).to.equal('Tool `soon_gone` not found');
    });

    it(`over ${kind}: a task-only tool of a server without task support is not offered, and onDebug says why`, async () => {
      const notes: string[] = [];
      const toolset = await open(server(), { onDebug: (note) => notes.push(note) });
      expect(toolset.tools.map((t) => t.name)).not.to.include('task_only');
      expect(notes).to.include(
        "MCP server \"fixture\": tool `task_only` is not offered: it must run as a task (execution.taskSupport 'required') and the server does not announce task-based tool calls (tasks.requests.tools.call)",
      );
      expect((await callTool(toolset, 'task_only')).returnValue.message).to.equal('Tool `task_only` not found');
    });
  }
});
