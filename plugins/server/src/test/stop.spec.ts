import { expect } from 'chai';

import { textPart } from '@kosong/core';
import { EchoChatProvider, MockChatProvider } from '@kosong/provider-echo';

import { memorySessions, type ChatSessions } from '../sessions.js';
import { KEYS, NodeChat, chatBody, localToolset, post, sseData, startServer, transport, waitFor, type TestServer } from './support.js';

const PARTS = Array.from({ length: 40 }, (_, i) => textPart(`word${i} `));
const FULL_TEXT = PARTS.map((p) => p.text).join('');

function request(server: TestServer, method: string, path: string, key: string = KEYS.acme): Promise<Response> {
  return fetch(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${key}` } });
}

/** Reads a body until `count` SSE events arrived. */
async function readEvents(reader: ReadableStreamDefaultReader<Uint8Array>, count: number): Promise<string> {
  const decoder = new TextDecoder();
  let text = '';
  while (text.split('\n\n').length - 1 < count) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  return text;
}

describe('@kosong/server: stop versus disconnect', () => {
  let server: TestServer;
  let sessions: ChatSessions;

  beforeEach(async () => {
    sessions = memorySessions();
    server = await startServer({ acme: new MockChatProvider(PARTS, { delayMs: 25 }), globex: new EchoChatProvider() }, { sessions });
  });
  afterEach(() => server.close());

  it("the AI SDK's stop() only closes the connection: the turn goes on, resumable, and is kept whole", async () => {
    const chat = new NodeChat({ id: 'blip', transport: transport(server, KEYS.acme) });
    const sending = chat.sendMessage({ text: 'go' });
    await waitFor(() => chat.status === 'streaming', 'the stream');
    await chat.stop();
    await sending;
    expect(chat.status).to.equal('ready');
    const resumed = await request(server, 'GET', '/api/chat/blip/stream');
    expect(resumed.status).to.equal(200);
    const chunks = sseData(await resumed.text()) as { type: string; delta?: string }[];
    expect(chunks.at(-2)).to.deep.include({ type: 'finish' });
    const context = await sessions.open('acme', 'blip');
    expect(context.history.map((m) => m.role)).to.deep.equal(['user', 'assistant']);
    expect(context.history[1]!.content).to.deep.equal([textPart(FULL_TEXT)]);
  });

  it("stop() and then POST …/stop (what a page sends): the turn is aborted, every reader's stream ends with abort, nothing of the step is kept", async () => {
    const chat = new NodeChat({ id: 'stopped', transport: transport(server, KEYS.acme) });
    const sending = chat.sendMessage({ text: 'go' });
    await waitFor(() => chat.status === 'streaming', 'the stream');
    const resumed = await request(server, 'GET', '/api/chat/stopped/stream');
    expect(resumed.status).to.equal(200);
    await chat.stop();
    await sending;
    const stop = await request(server, 'POST', '/api/chat/stopped/stop');
    expect(stop.status).to.equal(204);
    const chunks = sseData(await resumed.text()) as { type: string; reason?: string }[];
    expect(chunks.at(-2)).to.deep.equal({ type: 'abort', reason: 'Stopped by the client' });
    expect(chunks.at(-1)).to.equal('[DONE]');
    expect(chunks.map((c) => c.type)).to.not.include('finish');
    expect((await request(server, 'GET', '/api/chat/stopped/stream')).status).to.equal(204);
    const context = await sessions.open('acme', 'stopped');
    expect(context.history.map((m) => m.role)).to.deep.equal(['user']); // an aborted step is not saved
    // The chat takes the next message.
    const next = await post(server, chatBody('stopped', 'again'));
    expect(next.status).to.equal(200);
    await next.text();
  });

  it('DELETE …/stream stops too, and its own response reads the abort; a stop without a turn is a 404', async () => {
    const running = await post(server, chatBody('deleted', 'go'));
    const reader = running.body!.getReader();
    const head = await readEvents(reader, 4);
    const stop = await request(server, 'DELETE', '/api/chat/deleted/stream');
    expect(stop.status).to.equal(204);
    const rest = await readEvents(reader, Number.MAX_SAFE_INTEGER);
    const chunks = sseData(head + rest) as { type: string }[];
    expect(chunks.at(-2)).to.deep.include({ type: 'abort' });
    const none = await request(server, 'POST', '/api/chat/deleted/stop');
    expect(none.status).to.equal(404);
    expect(await none.json()).to.deep.equal({ error: { code: 'no_turn', message: 'This chat has no turn running' } });
  });

  it("a stop aborts the tool calls running: the tool's signal fires, and the stop returns once the turn has ended", async () => {
    const log: string[] = [];
    const tools = localToolset(log);
    await server.kernel.tenants.remove('acme');
    server.kernel.tenants.define('acme', {
      provider: new MockChatProvider([{ type: 'function', id: 'w1', function: { name: 'wait', arguments: '{"ms": 60000}' } }]),
      toolset: {
        tools: tools.tools,
        handle(call, context) {
          context.signal.addEventListener('abort', () => log.push('aborted'), { once: true });
          return tools.handle(call, context);
        },
      },
    });
    const running = await post(server, chatBody('tool-stop', 'go'));
    const reader = running.body!.getReader();
    await waitFor(() => log.includes('wait'), 'the tool call');
    const stop = await request(server, 'POST', '/api/chat/tool-stop/stop');
    expect(stop.status).to.equal(204);
    expect(log).to.include('aborted');
    const rest = sseData(await readEvents(reader, Number.MAX_SAFE_INTEGER)) as { type: string }[];
    expect(rest.at(-2)).to.deep.include({ type: 'abort' });
  });
});
