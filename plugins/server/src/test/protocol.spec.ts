import { expect } from 'chai';
import { readUIMessageStream, type UIMessage } from 'ai';

import { EchoChatProvider } from '@kosong/provider-echo';
import { APIConnectionError, type ChatProvider, type Message } from '@kosong/core';

import { memorySessions, type ChatSessions } from '../sessions.js';
import { KEYS, NodeChat, chatBody, expectKnownChunks, post, sseData, startServer, transport, type TestServer } from './support.js';

/** Two steps: thinking, text and two tool calls (one streamed in fragments, one failing), then an answer. */
const SCRIPT = [
  'usage: {"input_other": 10, "output": 5, "input_cache_read": 2}',
  'think: I will add the numbers.',
  'text: Adding',
  'text:  now.',
  'tool_call: {"id": "c1", "name": "add", "arguments": "{\\"a\\": 1,"}',
  'tool_call_part: " \\"b\\": 2}"',
  'tool_call: {"id": "c2", "name": "fail", "arguments": "{}"}',
  '---',
  'usage: {"input_other": 20, "output": 7}',
  'text: 1 + 2 = 3.',
].join('\n');

/** The UI message parts the kernel's turn stands for: what its history holds after the user message. */
function expectedParts(history: readonly Message[]): unknown[] {
  const parts: unknown[] = [];
  const results = new Map(history.filter((m) => m.role === 'tool').map((m) => [m.toolCallId, m]));
  for (const message of history.slice(1)) {
    if (message.role !== 'assistant') continue;
    parts.push({ type: 'step-start' });
    for (const part of message.content) {
      if (part.type === 'text') parts.push({ type: 'text', text: part.text });
      if (part.type === 'think') parts.push({ type: 'reasoning', text: part.think });
    }
    for (const call of message.toolCalls ?? []) {
      const result = results.get(call.id)!;
      // An error result reaches the model wrapped as `<system>ERROR: …</system>`; the UI gets what is inside.
      const text = result.content.map((p) => (p.type === 'text' ? p.text : '')).join('').replace(/^<system>ERROR: ([\s\S]*)<\/system>$/, '$1');
      parts.push({ type: 'dynamic-tool', toolCallId: call.id, toolName: call.function.name, input: JSON.parse(call.function.arguments ?? '{}'), result: text });
    }
  }
  return parts;
}

/** The assembled UI parts, reduced to what the comparison needs. */
function reduced(message: UIMessage): unknown[] {
  return message.parts.map((part) => {
    if (part.type === 'step-start') return { type: 'step-start' };
    if (part.type === 'text' || part.type === 'reasoning') {
      expect(part.state).to.equal('done');
      return { type: part.type, text: part.text };
    }
    if (part.type === 'dynamic-tool') {
      const result = part.state === 'output-available' ? part.output : part.state === 'output-error' ? part.errorText : `state ${part.state}`;
      return { type: part.type, toolCallId: part.toolCallId, toolName: part.toolName, input: part.input, result };
    }
    return { type: part.type };
  });
}

describe('@kosong/server: the UI message stream, read by the AI SDK', () => {
  let server: TestServer;
  let sessions: ChatSessions;

  beforeEach(async () => {
    sessions = memorySessions();
    server = await startServer({ acme: new EchoChatProvider(), globex: new EchoChatProvider() }, { sessions });
  });
  afterEach(() => server.close());

  it('DefaultChatTransport + readUIMessageStream assemble the parts of the kernel turn: reasoning, text, tool calls in call order with their outputs', async () => {
    const stream = await transport(server, KEYS.acme).sendMessages({
      chatId: 'chat-protocol',
      trigger: 'submit-message',
      messageId: undefined,
      abortSignal: undefined,
      messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: SCRIPT }] }],
    });
    let last: UIMessage | undefined;
    for await (const message of readUIMessageStream({ stream, terminateOnError: true })) last = message;
    expect(last).to.not.equal(undefined);

    const context = await sessions.open('acme', 'chat-protocol');
    const history = context.history;
    expect(history.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'tool', 'tool', 'assistant']);
    const parts = reduced(last!);
    expect(parts).to.deep.equal(expectedParts(history));
    // What that means here, spelt out:
    expect(parts).to.deep.equal([
      { type: 'step-start' },
      { type: 'reasoning', text: 'I will add the numbers.' },
      { type: 'text', text: 'Adding now.' },
      { type: 'dynamic-tool', toolCallId: 'c1', toolName: 'add', input: { a: 1, b: 2 }, result: '3' },
      { type: 'dynamic-tool', toolCallId: 'c2', toolName: 'fail', input: {}, result: (parts[4] as { result: string }).result },
      { type: 'step-start' },
      { type: 'text', text: '1 + 2 = 3.' },
    ]);
    expect((parts[4] as { result: string }).result).to.include('the fail tool failed');
    expect(last!.metadata).to.deep.equal({
      // The last step's usage (a message-metadata chunk after each finish-step), then the turn's (finish).
      step: { usage: { inputTokens: 20, outputTokens: 7, totalTokens: 27, cachedInputTokens: 0, cacheCreationInputTokens: 0 } },
      usage: { inputTokens: 32, outputTokens: 12, totalTokens: 44, cachedInputTokens: 2, cacheCreationInputTokens: 0 },
      stopReason: 'no_tool_calls',
      steps: 2,
    });
  });

  it("the AI SDK's Chat (AbstractChat, in Node) sends, streams and ends ready; the next message continues the server's conversation", async () => {
    const errors: Error[] = [];
    const chat = new NodeChat({ id: 'chat-two-turns', transport: transport(server, KEYS.acme), onError: (error) => errors.push(error) });
    await chat.sendMessage({ text: 'text: first answer' });
    await chat.sendMessage({ text: 'text: second answer' });
    expect(errors).to.deep.equal([]);
    expect(chat.status).to.equal('ready');
    expect(chat.messages.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'user', 'assistant']);
    expect(chat.messages[3]!.parts.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text)).to.deep.equal(['second answer']);
    const context = await sessions.open('acme', 'chat-two-turns');
    expect(context.history.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'user', 'assistant']);
  });

  it('speaks the wire format: the stream headers, known chunk types only, start first, finish then [DONE] last', async () => {
    const response = await post(server, chatBody('chat-wire', SCRIPT));
    expect(response.status).to.equal(200);
    expect(response.headers.get('content-type')).to.equal('text/event-stream');
    expect(response.headers.get('x-vercel-ai-ui-message-stream')).to.equal('v1');
    const events = sseData(await response.text());
    expect(events.at(-1)).to.equal('[DONE]');
    const chunks = events.slice(0, -1) as { type: string }[];
    const known = new Set(['start', 'start-step', 'finish-step', 'message-metadata', 'text-start', 'text-delta', 'text-end', 'reasoning-start', 'reasoning-delta', 'reasoning-end', 'tool-input-start', 'tool-input-delta', 'tool-input-available', 'tool-output-available', 'tool-output-error', 'finish', 'error', 'abort']);
    for (const chunk of chunks) expect(known.has(chunk.type), chunk.type).to.equal(true);
    await expectKnownChunks(chunks);
    expect(chunks[0]!.type).to.equal('start');
    expect(chunks.at(-1)!.type).to.equal('finish');
    expect(chunks.filter((c) => c.type === 'start-step')).to.have.length(2);
    expect(chunks.filter((c) => c.type === 'finish-step')).to.have.length(2);
    expect(chunks.filter((c) => c.type === 'tool-input-delta').map((c) => (c as unknown as { inputTextDelta: string }).inputTextDelta).join('')).to.equal('{"a": 1, "b": 2}{}');
  });

  it('a failing turn ends with an error chunk the client reports', async () => {
    // An echo script that is not one: the provider refuses it, the turn fails.
    const errors: Error[] = [];
    const chat = new NodeChat({ id: 'chat-error', transport: transport(server, KEYS.acme), onError: (error) => errors.push(error) });
    await chat.sendMessage({ text: 'nonsense: this is no directive' });
    expect(chat.status).to.equal('error');
    expect(errors).to.have.length(1);
    expect(errors[0]!.message).to.match(/nonsense|directive|unknown/i);
  });

  it('a failed attempt that the agent tries again is a transient data-kosong-retry chunk (a data chunk the AI SDK knows); the message is the attempt that succeeded', async () => {
    await server.close();
    const echo = new EchoChatProvider();
    let calls = 0;
    const flaky: ChatProvider = {
      get name() {
        return echo.name;
      },
      get modelName() {
        return echo.modelName;
      },
      get thinkingEffort() {
        return echo.thinkingEffort;
      },
      generate(...args) {
        calls++;
        if (calls === 1) return Promise.reject(new APIConnectionError('the connection was reset'));
        return echo.generate(...args);
      },
      get generation() {
        return echo.generation;
      },
      withThinking: (effort) => echo.withThinking(effort),
      withGeneration: (options) => echo.withGeneration(options),
    };
    server = await startServer({ acme: flaky, globex: new EchoChatProvider() }, { sessions: memorySessions(), agent: { systemPrompt: '', retry: { initialDelayMs: 1, jitterMs: 0 } } });
    const chunks = sseData(await (await post(server, chatBody('retried', 'text: after a retry'))).text()) as { type: string; data?: unknown; transient?: boolean }[];
    await expectKnownChunks(chunks);
    const retry = chunks.find((c) => c.type === 'data-kosong-retry')!;
    expect(retry).to.deep.equal({ type: 'data-kosong-retry', data: { attempt: 1, nextAttempt: 2, delayMs: 1, error: 'the connection was reset' }, transient: true });
    expect(chunks.filter((c) => c.type === 'text-delta')).to.have.length(1);
    expect(calls).to.equal(2);
  });
});
