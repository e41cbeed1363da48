import { expect } from 'chai';
import { readUIMessageStream, type UIMessage } from 'ai';

import { textPart } from '@kosong/core';
import { EchoChatProvider, MockChatProvider } from '@kosong/provider-echo';

import { memorySessions, type ChatSessions } from '../sessions.js';
import { KEYS, chatBody, post, sseData, startServer, transport, type TestServer } from './support.js';

const PARTS = Array.from({ length: 12 }, (_, i) => textPart(`word${i} `));
const FULL_TEXT = PARTS.map((p) => p.text).join('');

function resumeRequest(server: TestServer, chatId: string, key: string = KEYS.acme): Promise<Response> {
  return fetch(`${server.url}/api/chat/${encodeURIComponent(chatId)}/stream`, { headers: { authorization: `Bearer ${key}` } });
}

/** Reads a body until `count` SSE events arrived; returns the text read. */
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

describe('@kosong/server: resuming a turn, and clients that go away', () => {
  let server: TestServer;
  let sessions: ChatSessions;
  let slow: MockChatProvider;

  beforeEach(async () => {
    sessions = memorySessions();
    slow = new MockChatProvider(PARTS, { delayMs: 40 });
    server = await startServer({ acme: slow, globex: new EchoChatProvider() }, { sessions });
  });
  afterEach(() => server.close());

  it('GET …/stream is a 204 when the chat has no turn running (never had one, or it ended)', async () => {
    expect((await resumeRequest(server, 'no-such-chat')).status).to.equal(204);
    const done = await post(server, chatBody('ended', 'text: quick'), KEYS.globex);
    await done.text();
    expect((await resumeRequest(server, 'ended', KEYS.globex)).status).to.equal(204);
  });

  it('resuming mid-turn replays the turn from its first chunk, then follows it live: the same chunks as the original response', async () => {
    const original = await post(server, chatBody('mid', 'go'));
    const reader = original.body!.getReader();
    const head = await readEvents(reader, 4); // start, start-step, text-start, a delta or two
    expect(sseData(head)[0]).to.deep.include({ type: 'start' });

    const resumed = await resumeRequest(server, 'mid');
    expect(resumed.status).to.equal(200);
    expect(resumed.headers.get('x-vercel-ai-ui-message-stream')).to.equal('v1');
    const [resumedText, rest] = await Promise.all([resumed.text(), readEvents(reader, Number.MAX_SAFE_INTEGER)]);
    expect(resumedText).to.equal(head + rest);
    const chunks = sseData(resumedText);
    expect(chunks.at(-1)).to.equal('[DONE]');
    expect(chunks.filter((c) => (c as { type?: string }).type === 'text-delta').map((c) => (c as { delta: string }).delta).join('')).to.equal(FULL_TEXT);
  });

  it("the AI SDK's reconnectToStream reads a resumed turn into the whole message", async () => {
    const original = await post(server, chatBody('sdk-resume', 'go'));
    const reader = original.body!.getReader();
    await readEvents(reader, 5);
    const stream = await transport(server, KEYS.acme).reconnectToStream({ chatId: 'sdk-resume' });
    expect(stream).to.not.equal(null);
    let last: UIMessage | undefined;
    for await (const message of readUIMessageStream({ stream: stream!, terminateOnError: true })) last = message;
    expect(last!.parts.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text)).to.deep.equal([FULL_TEXT]);
    await reader.cancel();
    // And once it ended, the SDK is told there is nothing to resume.
    expect(await transport(server, KEYS.acme).reconnectToStream({ chatId: 'sdk-resume' })).to.equal(null);
  });

  it('a client that disconnects mid-turn does not abort it: the turn runs to its end, stays resumable meanwhile, and is kept', async () => {
    const controller = new AbortController();
    const original = await fetch(`${server.url}/api/chat`, { method: 'POST', headers: { authorization: `Bearer ${KEYS.acme}` }, body: chatBody('dropped', 'go'), signal: controller.signal });
    const reader = original.body!.getReader();
    await readEvents(reader, 4);
    controller.abort(); // the connection goes away mid-stream
    await reader.read().catch(() => undefined);

    await new Promise((resolve) => setTimeout(resolve, 100));
    const resumed = await resumeRequest(server, 'dropped');
    expect(resumed.status).to.equal(200); // still running, still resumable
    const chunks = sseData(await resumed.text());
    expect(chunks.at(-2)).to.deep.include({ type: 'finish', finishReason: 'stop' });
    const context = await sessions.open('acme', 'dropped');
    expect(context.history.map((m) => m.role)).to.deep.equal(['user', 'assistant']);
    expect(context.history[1]!.content).to.deep.equal([textPart(FULL_TEXT)]);
  });

  it('a turn longer than maxTurnBufferBytes is no longer resumable (204); its own response still gets every chunk', async () => {
    await server.close();
    server = await startServer({ acme: new MockChatProvider(PARTS, { delayMs: 5 }), globex: new EchoChatProvider() }, { sessions: memorySessions(), maxTurnBufferBytes: 300 });
    const original = await post(server, chatBody('long', 'go'));
    const reader = original.body!.getReader();
    const head = await readEvents(reader, 8);
    expect((await resumeRequest(server, 'long')).status).to.equal(204);
    const rest = await readEvents(reader, Number.MAX_SAFE_INTEGER);
    const deltas = sseData(head + rest).filter((c) => (c as { type?: string }).type === 'text-delta');
    expect(deltas.map((c) => (c as { delta: string }).delta).join('')).to.equal(FULL_TEXT);
  });

  it('closing the server aborts running turns: their streams end with an abort chunk', async () => {
    const original = await post(server, chatBody('closing', 'go'));
    const reader = original.body!.getReader();
    const head = await readEvents(reader, 3);
    const closing = server.app.close();
    const rest = await readEvents(reader, Number.MAX_SAFE_INTEGER);
    await closing;
    const chunks = sseData(head + rest);
    expect(chunks.at(-2)).to.deep.include({ type: 'abort' });
    expect(chunks.at(-1)).to.equal('[DONE]');
  });
});
