/**
 * What the AI SDK bridge promises beyond the conformance suite, with the real AI SDK provider
 * packages over real HTTP to this project's local servers:
 *
 * - parallel tool calls are dispatched while the model still streams: the first tool starts while
 *   the server is still sending the response (the AI SDK's own `streamText` waits for the end);
 * - thinking survives the round trip: Anthropic's signed and redacted thinking, Gemini's thought
 *   signature on a function call, the reasoning of an OpenAI-compatible endpoint go back on the next
 *   step as the API sent them;
 * - an abort reaches the server (the connection closed) within 100 ms.
 */
import { generate, step, toolOk, type ChatProvider, type Message, type Toolset } from '@kosong/core';
import { ChatCompletionsServer, completionChunk, toolCallChunk, usageChunk } from '@kosong/provider-openai/testing';
import { messageReply, MessagesServer, ping, textReply as anthropicText } from '@kosong/provider-anthropic/testing';
import { GeminiServer, wireChunk, wireFunctionCall, wireText, wireThought } from '@kosong/provider-google/testing';
import { expect } from 'chai';

import { bridge, type PACKAGES } from './ai-sdk-adapters.js';

const KEY = 'sk-ai-sdk-proof-0123456789abcdef';
const GO: readonly Message[] = [{ role: 'user', content: [{ type: 'text', text: 'go' }] }];
/** Wait before each event of a paced reply. */
const PACE_MS = 30;
/** Events after the second call and before the end (pings, empty chunks): the server is still sending when the first tool runs. */
const TRAILING = 5;

/** A server of one API as these tests use it. */
interface Served {
  readonly provider: ChatProvider;
  /** When the exchange of the first request closed (`performance.now()`), and how; waits for the request to come. */
  readonly closedAt: () => Promise<{ readonly at: number; readonly how: string }>;
  readonly lastBody: () => Record<string, unknown>;
  close(): Promise<void>;
}

/** Serves `replies` (one per request) from the API's local server, the package's model talking to it. */
type Serve = (replies: readonly unknown[]) => Promise<Served>;

function served(pkg: keyof typeof PACKAGES, model: string, server: { url: string; requests: { closed: Promise<string>; body: unknown }[]; close(): Promise<void> }, path: string): Served {
  const last = (): { closed: Promise<string>; body: unknown } => server.requests.at(-1)!;
  return {
    provider: bridge(pkg, { baseURL: `${server.url}${path}`, apiKey: KEY }, model),
    // the promise settles on the response's `close` event; `then` runs right after it, before any other I/O
    closedAt: async () => {
      while (server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 1));
      const how = await server.requests[0]!.closed;
      return { at: performance.now(), how };
    },
    lastBody: () => last().body as Record<string, unknown>,
    close: () => server.close(),
  };
}

const chatCompletions =
  (pkg: '@ai-sdk/openai' | '@ai-sdk/openai-compatible'): Serve =>
  async (replies) => {
    const server = await ChatCompletionsServer.start();
    server.reply(...(replies as Parameters<typeof server.reply>));
    return served(pkg, 'test-model', { url: server.baseURL, requests: server.requests, close: () => server.close() }, '');
  };

const messages: Serve = async (replies) => {
  const server = await MessagesServer.start();
  server.reply(...(replies as Parameters<typeof server.reply>));
  return served('@ai-sdk/anthropic', 'claude-sonnet-4-5', server, '/v1');
};

const gemini: Serve = async (replies) => {
  const server = await GeminiServer.start();
  server.reply(...(replies as Parameters<typeof server.reply>));
  return served('@ai-sdk/google', 'gemini-2.5-flash', server, '/v1beta');
};

/** Each package: its server, a paced reply of text and two tool calls (then trailing events), and a paced text reply. */
const CASES: readonly { readonly pkg: keyof typeof PACKAGES; readonly serve: Serve; readonly twoCalls: () => unknown; readonly slowText: () => unknown }[] = [
  ...(['@ai-sdk/openai', '@ai-sdk/openai-compatible'] as const).map((pkg) => ({
    pkg,
    serve: chatCompletions(pkg),
    twoCalls: () => ({
      type: 'stream',
      chunkDelayMs: PACE_MS,
      chunks: [
        completionChunk({ delta: { role: 'assistant', content: 'Looking both up.' } }),
        toolCallChunk({ index: 0, id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":' } }),
        toolCallChunk({ index: 0, function: { arguments: '"alpha"}' } }),
        toolCallChunk({ index: 1, id: 'call_2', type: 'function', function: { name: 'lookup', arguments: '{"q":' } }),
        toolCallChunk({ index: 1, function: { arguments: '"beta"}' } }),
        ...Array.from({ length: TRAILING }, () => completionChunk({ delta: {} })),
        completionChunk({ delta: {}, finishReason: 'tool_calls' }),
        usageChunk({ prompt_tokens: 10, completion_tokens: 20 }),
      ],
    }),
    slowText: () => ({ type: 'stream', chunkDelayMs: 40, chunks: [completionChunk({ delta: { role: 'assistant', content: '' } }), ...Array.from({ length: 50 }, () => completionChunk({ delta: { content: 'tick ' } })), completionChunk({ delta: {}, finishReason: 'stop' })] }),
  })),
  {
    pkg: '@ai-sdk/anthropic',
    serve: messages,
    twoCalls: () => {
      const reply = messageReply([
        { type: 'text', text: ['Looking both up.'] },
        { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: ['{"q":', '"alpha"}'] },
        { type: 'tool_use', id: 'toolu_2', name: 'lookup', input: ['{"q":', '"beta"}'] },
      ]);
      // pings before the message's end
      return { ...reply, eventDelayMs: PACE_MS, events: [...reply.events.slice(0, -2), ...Array.from({ length: TRAILING }, () => ping()), ...reply.events.slice(-2)] };
    },
    slowText: () => ({ ...anthropicText(Array.from({ length: 50 }, () => 'tick ')), eventDelayMs: 40 }),
  },
  {
    pkg: '@ai-sdk/google',
    serve: gemini,
    twoCalls: () => ({
      type: 'stream',
      eventDelayMs: PACE_MS,
      events: [
        wireChunk({ parts: [wireText('Looking both up.')] }),
        wireChunk({ parts: [wireFunctionCall('lookup', { q: 'alpha' }, { id: 'fc_1' })] }),
        wireChunk({ parts: [wireFunctionCall('lookup', { q: 'beta' }, { id: 'fc_2' })] }),
        ...Array.from({ length: TRAILING }, () => wireChunk({ parts: [] })),
        wireChunk({ finishReason: 'STOP', usage: { promptTokenCount: 10, candidatesTokenCount: 20 } }),
      ],
    }),
    slowText: () => ({ type: 'stream', eventDelayMs: 40, events: Array.from({ length: 50 }, (_, index) => wireChunk({ parts: [wireText('tick ')], ...(index === 49 ? { finishReason: 'STOP' } : {}) })) }),
  },
];

/** A toolset whose `lookup` notes when it started (`performance.now()`). */
function watchingToolset(): Toolset & { readonly starts: { readonly id: string; readonly at: number }[] } {
  const starts: { id: string; at: number }[] = [];
  return {
    starts,
    tools: [{ name: 'lookup', description: 'Looks something up.', parameters: { type: 'object', properties: { q: { type: 'string' } } } }],
    handle: (call) => {
      starts.push({ id: call.id, at: performance.now() });
      return { toolCallId: call.id, returnValue: toolOk({ output: `found ${call.function.arguments ?? ''}` }) };
    },
  };
}

describe('aiSdkProvider with the AI SDK provider packages, over real HTTP', function () {
  this.timeout(10_000);

  for (const { pkg, serve, twoCalls, slowText } of CASES) {
    describe(pkg, () => {
      it('dispatches parallel tool calls while the model still streams: the first tool starts before the server has finished sending', async () => {
        const server = await serve([twoCalls()]);
        try {
          const toolset = watchingToolset();
          const running = step({ provider: server.provider, systemPrompt: '', toolset, history: [...GO] });
          const closed = server.closedAt();
          const result = await running;
          const results = await result.toolResults();
          expect(results.map((r) => r.returnValue.output)).to.deep.equal(['found {"q":"alpha"}', 'found {"q":"beta"}']);
          expect(toolset.starts.map((start) => start.id)).to.deep.equal(result.toolCalls.map((call) => call.id));
          const sent = await closed;
          expect(sent.how).to.equal('completed');
          // the server had the trailing events (paced) and the end still to send when the first tool started
          expect(sent.at - toolset.starts[0]!.at, 'ms from the first tool start to the end of the response').to.be.above(TRAILING * PACE_MS * 0.5);
          expect(result.finishReason).to.equal('tool_calls');
        } finally {
          await server.close();
        }
      });

      it('an abort reaches the server within 100 ms: the connection is closed before the response ends', async () => {
        const server = await serve([slowText()]);
        try {
          const controller = new AbortController();
          const stream = await server.provider.generate('', [], [...GO], { signal: controller.signal });
          let abortedAt = 0;
          const reading = (async () => {
            for await (const part of stream) {
              void part;
              if (abortedAt === 0) {
                abortedAt = performance.now();
                controller.abort(new Error('stop'));
              }
            }
          })().catch((error: unknown) => error);
          const closed = await server.closedAt();
          expect(((await reading) as Error).message).to.equal('stop');
          expect(closed.how).to.equal('aborted');
          expect(closed.at - abortedAt, 'ms from the abort to the closed connection').to.be.below(100);
        } finally {
          await server.close();
        }
      });
    });
  }

  describe('thinking survives the round trip', () => {
    it('@ai-sdk/anthropic: signed and redacted thinking go back as thinking and redacted_thinking blocks', async () => {
      const server = await messages([
        messageReply([
          { type: 'thinking', thinking: ['Let me ', 'think.'], signature: 'sig_round_trip' },
          { type: 'redacted_thinking', data: 'opaque-redacted' },
          { type: 'text', text: ['Answer.'] },
        ]),
        anthropicText(['Again.']),
      ]);
      try {
        const first = await generate({ provider: server.provider, systemPrompt: '', history: [...GO] });
        expect(first.message.content.map((part) => part.type)).to.deep.equal(['think', 'think', 'text']);
        const history = JSON.parse(JSON.stringify([...GO, first.message, { role: 'user', content: [{ type: 'text', text: 'more' }] }])) as Message[];
        await generate({ provider: server.provider, systemPrompt: '', history });
        const sent = (server.lastBody()['messages'] as { role: string; content: unknown[] }[])[1]!;
        expect(sent.role).to.equal('assistant');
        expect(sent.content.slice(0, 2)).to.deep.equal([
          { type: 'thinking', thinking: 'Let me think.', signature: 'sig_round_trip' },
          { type: 'redacted_thinking', data: 'opaque-redacted' },
        ]);
      } finally {
        await server.close();
      }
    });

    it("@ai-sdk/google: a function call's thought signature goes back on the call", async () => {
      const server = await gemini([
        {
          type: 'stream',
          events: [
            wireChunk({ parts: [wireThought('Planning.')] }),
            wireChunk({ parts: [wireFunctionCall('lookup', { q: 'alpha' }, { id: 'fc_1', thoughtSignature: 'c2lnbmF0dXJl' })], finishReason: 'STOP' }),
          ],
        },
        { type: 'stream', events: [wireChunk({ parts: [wireText('Done.')], finishReason: 'STOP' })] },
      ]);
      try {
        const toolset = watchingToolset();
        const first = await step({ provider: server.provider, systemPrompt: '', toolset, history: [...GO] });
        const [result] = await first.toolResults();
        const history = JSON.parse(JSON.stringify([...GO, first.message, { role: 'tool', toolCallId: result!.toolCallId, content: [{ type: 'text', text: 'found' }] }])) as Message[];
        await generate({ provider: server.provider, systemPrompt: '', history });
        const model = (server.lastBody()['contents'] as { role: string; parts: Record<string, unknown>[] }[])[1]!;
        expect(model.role).to.equal('model');
        expect(model.parts.find((part) => 'functionCall' in part)).to.deep.include({ thoughtSignature: 'c2lnbmF0dXJl' });
      } finally {
        await server.close();
      }
    });

    it('@ai-sdk/openai-compatible: the reasoning goes back with the assistant message', async () => {
      const server = await chatCompletions('@ai-sdk/openai-compatible')([
        { type: 'stream', chunks: [completionChunk({ delta: { reasoning_content: 'Because.' } }), completionChunk({ delta: { content: 'Answer.' } }), completionChunk({ delta: {}, finishReason: 'stop' })] },
        { type: 'stream', chunks: [completionChunk({ delta: { content: 'Again.' } }), completionChunk({ delta: {}, finishReason: 'stop' })] },
      ]);
      try {
        const first = await generate({ provider: server.provider, systemPrompt: '', history: [...GO] });
        expect(first.message.content).to.deep.equal([
          { type: 'think', think: 'Because.' },
          { type: 'text', text: 'Answer.' },
        ]);
        await generate({ provider: server.provider, systemPrompt: '', history: [...GO, first.message, { role: 'user', content: [{ type: 'text', text: 'more' }] }] });
        const assistant = (server.lastBody()['messages'] as Record<string, unknown>[])[1]!;
        expect(assistant).to.include({ role: 'assistant', content: 'Answer.', reasoning_content: 'Because.' });
      } finally {
        await server.close();
      }
    });
  });
});
