import { expect } from 'chai';
import { lastAssistantMessageIsCompleteWithApprovalResponses, readUIMessageStream, type UIMessage, type UIMessageChunk } from 'ai';

import { EchoChatProvider } from '@kosong/provider-echo';
import { APIConnectionError, definePlugin, requireApproval, type ChatProvider, type Message, type TokenUsage, type ToolResult } from '@kosong/core';
import { costOf, type ModelPrice } from '@kosong/core/kernel';

import { memorySessions, type ChatSessions } from '../sessions.js';
import { KEYS, NodeChat, chatBody, expectKnownChunks, localToolset, post, recordingTransport, sseData, startServer, transport, UnpricedEchoChatProvider, waitFor, type TestServer } from './support.js';

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
    // The kernel's own account of each step: its message and tool results (hooks of every step).
    const stepMessages: Message[] = [];
    const toolResults: { index: number; result: ToolResult }[] = [];
    await server.kernel.use(definePlugin({ name: 'test.steps', setup: (ctx) => ctx.bindHooks({ onStepEnd: (e) => void (e.message && stepMessages.push(e.message)), onToolResult: (e) => void toolResults.push({ index: e.index, result: e.result }) }) }));
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
    // The history is the StepResults: each step's message, then its tool results in call order (they settle in any order).
    expect(history.filter((m) => m.role === 'assistant')).to.deep.equal(stepMessages);
    const inCallOrder = toolResults.sort((a, b) => a.index - b.index).map(({ result }) => result.toolCallId);
    expect(history.filter((m) => m.role === 'tool').map((m) => m.toolCallId)).to.deep.equal(inCallOrder);
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
      // The echo model has no price in this kernel (nor in the catalog): its cost is unknown, not 0.
      step: { usage: { inputTokens: 20, outputTokens: 7, totalTokens: 27, cachedInputTokens: 0, cacheCreationInputTokens: 0 }, cost: null, model: 'echo/echo' },
      usage: { inputTokens: 32, outputTokens: 12, totalTokens: 44, cachedInputTokens: 2, cacheCreationInputTokens: 0 },
      cost: null,
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

/** The price the cost tests give the echo model (US dollars per million tokens). */
const ECHO_PRICE: ModelPrice = { input: 3, output: 15, cacheRead: 0.3 };

/** Token usage as the echo DSL's `usage:` line writes it. */
function usage(input: number, output: number, cacheRead = 0): TokenUsage {
  return { inputOther: input, output, inputCacheRead: cacheRead, inputCacheCreation: 0 };
}

/** The `message-metadata` chunks' `step` metadata, in order. */
function stepMetadata(chunks: readonly UIMessageChunk[]): unknown[] {
  return chunks.filter((chunk) => chunk.type === 'message-metadata').map((chunk) => (chunk.messageMetadata as { step: unknown }).step);
}

/** The `finish` chunk's message metadata. */
function finishMetadata(chunks: readonly UIMessageChunk[]): Record<string, unknown> {
  const finish = chunks.find((chunk) => chunk.type === 'finish');
  expect(finish, 'a finish chunk').to.not.equal(undefined);
  return (finish as { messageMetadata: Record<string, unknown> }).messageMetadata;
}

describe("@kosong/server: each step's usage and cost, as the AI SDK's client receives them", () => {
  let server: TestServer;
  afterEach(() => server?.close());

  it("a priced model: each step's message-metadata has its usage, its cost (the kernel's prices, as its usage ledger prices it) and its model; finish has the turn's cost", async () => {
    server = await startServer({ acme: new EchoChatProvider(), globex: new UnpricedEchoChatProvider() }, { kernelOptions: { prices: { 'echo/echo': ECHO_PRICE } } });
    const recording = recordingTransport(server, KEYS.acme);
    const errors: Error[] = [];
    const chat = new NodeChat({ id: 'chat-priced', transport: recording, onError: (error) => errors.push(error) });
    await chat.sendMessage({ text: SCRIPT });
    expect(errors).to.deep.equal([]);
    await expectKnownChunks(recording.chunks);

    const first = costOf(usage(10, 5, 2), ECHO_PRICE);
    const second = costOf(usage(20, 7), ECHO_PRICE);
    expect(first).to.be.closeTo((10 * 3 + 2 * 0.3 + 5 * 15) / 1e6, 1e-12);
    expect(stepMetadata(recording.chunks)).to.deep.equal([
      { usage: { inputTokens: 12, outputTokens: 5, totalTokens: 17, cachedInputTokens: 2, cacheCreationInputTokens: 0 }, cost: first, model: 'echo/echo' },
      { usage: { inputTokens: 20, outputTokens: 7, totalTokens: 27, cachedInputTokens: 0, cacheCreationInputTokens: 0 }, cost: second, model: 'echo/echo' },
    ]);
    // Each step's metadata comes right after its finish-step.
    const types = recording.chunks.map((chunk) => chunk.type);
    types.forEach((type, index) => type === 'message-metadata' && expect(types[index - 1]).to.equal('finish-step'));
    expect(finishMetadata(recording.chunks).cost).to.equal(first + second);
    // The assembled message: the last step's metadata, and the turn's.
    expect(chat.lastMessage!.metadata).to.deep.include({ step: stepMetadata(recording.chunks)[1], cost: first + second, steps: 2 });
    // The same figure as the kernel's usage ledger.
    const rows = await server.kernel.usage.query({ tenant: 'acme' });
    expect(rows.reduce((sum, row) => sum + (row.costUsd ?? 0), 0)).to.be.closeTo(first + second, 1e-15);
  });

  it('an unpriced model: its cost is null (unknown), never 0, per step and for the turn', async () => {
    server = await startServer({ acme: new EchoChatProvider(), globex: new UnpricedEchoChatProvider() }, { kernelOptions: { prices: { 'echo/echo': ECHO_PRICE } } });
    const recording = recordingTransport(server, KEYS.globex);
    const chat = new NodeChat({ id: 'chat-unpriced', transport: recording });
    await chat.sendMessage({ text: SCRIPT });
    expect(chat.status).to.equal('ready');
    const steps = stepMetadata(recording.chunks) as { cost: unknown; model: unknown }[];
    expect(steps.map((step) => [step.cost, step.model])).to.deep.equal([
      [null, 'echo/echo-unpriced'],
      [null, 'echo/echo-unpriced'],
    ]);
    expect(finishMetadata(recording.chunks)).to.deep.include({ cost: null });
  });

  it('a step that waits for approval: its usage and cost come after its finish-step, before the approval request; the continuation prices its own steps, its turn cost is null', async () => {
    const script = ['usage: {"input_other": 40, "output": 10}', 'tool_call: {"id": "a1", "name": "add", "arguments": "{\\"a\\": 1, \\"b\\": 2}"}', '---', 'usage: {"input_other": 60, "output": 4}', 'text: 3'].join('\n');
    server = await startServer(
      { acme: new EchoChatProvider(), globex: new EchoChatProvider() },
      { kernelOptions: { prices: { 'echo/echo': ECHO_PRICE } }, toolsets: { acme: requireApproval(localToolset()) } },
    );
    const recording = recordingTransport(server, KEYS.acme);
    const errors: Error[] = [];
    const chat = new NodeChat({ id: 'chat-approval-cost', transport: recording, onError: (error) => errors.push(error), sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses });
    await chat.sendMessage({ text: script });
    const asked = recording.chunks.splice(0);
    await expectKnownChunks(asked);
    const types = asked.map((chunk) => chunk.type);
    expect(types.slice(types.indexOf('finish-step'))).to.deep.equal(['finish-step', 'message-metadata', 'tool-approval-request', 'finish']);
    const waiting = costOf(usage(40, 10), ECHO_PRICE);
    expect(stepMetadata(asked)).to.deep.equal([{ usage: { inputTokens: 40, outputTokens: 10, totalTokens: 50, cachedInputTokens: 0, cacheCreationInputTokens: 0 }, cost: waiting, model: 'echo/echo' }]);
    expect(finishMetadata(asked)).to.deep.include({ cost: waiting, stopReason: 'approval_required' });

    const part = chat.lastMessage!.parts.find((p) => p.type === 'dynamic-tool') as { approval: { id: string } };
    await chat.addToolApprovalResponse({ id: part.approval.id, approved: true });
    await waitFor(() => chat.status === 'ready' && recording.chunks.some((chunk) => chunk.type === 'finish'), 'the continuation');
    expect(errors).to.deep.equal([]);
    await expectKnownChunks(recording.chunks);
    // The waiting step was priced in the turn that ran it: the continuation sends only its next step's.
    expect(stepMetadata(recording.chunks)).to.deep.equal([{ usage: { inputTokens: 60, outputTokens: 4, totalTokens: 64, cachedInputTokens: 0, cacheCreationInputTokens: 0 }, cost: costOf(usage(60, 4), ECHO_PRICE), model: 'echo/echo' }]);
    expect(finishMetadata(recording.chunks)).to.deep.include({ cost: null, stopReason: 'no_tool_calls' });
    expect(chat.lastMessage!.metadata).to.deep.include({ cost: null });
  });
});
