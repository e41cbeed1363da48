/**
 * GeminiChatProvider in the provider conformance suite: each scenario becomes a reply of a local
 * Gemini REST streaming server on 127.0.0.1 (a fresh server per scenario), and the provider talks to
 * it over real HTTP through the official `@google/genai` SDK.
 */
import type { GenerationOptions } from '@kosong/core';
import { GeminiChatProvider } from '@kosong/provider-google';
import { errorBody, GeminiServer, wireChunk, wireFunctionCall, wireText, wireThought, type ServerReply } from '@kosong/provider-google/testing';
import { conformanceSuite, type Primed, type Scenario } from './conformance.js';
import { credentialLeakSuite } from './credential-leaks.js';

function reply(scenario: Scenario): ServerReply {
  switch (scenario.kind) {
    case 'text':
    case 'slow':
      return {
        type: 'stream',
        events: scenario.chunks.map((text, index) => wireChunk({ parts: [wireText(text)], ...(index === scenario.chunks.length - 1 ? { finishReason: 'STOP' } : {}) })),
        ...(scenario.kind === 'slow' ? { eventDelayMs: scenario.delayMs } : {}),
      };
    case 'think':
      return {
        type: 'stream',
        events: [...scenario.think.map((text) => wireChunk({ parts: [wireThought(text)] })), ...scenario.text.map((text) => wireChunk({ parts: [wireText(text)] })), wireChunk({ finishReason: 'STOP' })],
      };
    case 'tool_calls':
      return {
        type: 'stream',
        events: [
          wireChunk({ parts: [wireText(scenario.text)] }),
          wireChunk({ parts: scenario.calls.map((call) => wireFunctionCall(call.name, JSON.parse(call.args) as Record<string, unknown>, { id: call.id })), finishReason: 'STOP' }),
        ],
      };
    case 'usage': {
      const { inputOther, inputCacheRead, output } = scenario.usage;
      const thoughts = Math.min(4, output);
      return {
        type: 'stream',
        events: [
          wireChunk({
            parts: [wireText(scenario.text)],
            finishReason: 'STOP',
            usage: { promptTokenCount: inputOther + inputCacheRead, cachedContentTokenCount: inputCacheRead, candidatesTokenCount: output - thoughts, thoughtsTokenCount: thoughts },
          }),
        ],
      };
    }
    case 'error': {
      if (scenario.error === 'connection') return (_request, response) => void response.socket?.destroy();
      if (scenario.error === 'timeout') return { type: 'hang' };
      const status = scenario.status ?? 500;
      const retry = scenario.retryAfterSeconds === undefined ? undefined : [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${scenario.retryAfterSeconds}s` }];
      return { type: 'body', status, body: errorBody(status, status === 429 ? 'RESOURCE_EXHAUSTED' : 'INTERNAL', 'failed on purpose', retry) };
    }
  }
}

const servers: GeminiServer[] = [];

/** The generation options of a Gemini request body (`generationConfig`, `toolConfig`), in neutral terms. */
function geminiGeneration(body: Record<string, unknown>): GenerationOptions {
  const config = (body['generationConfig'] ?? {}) as Record<string, unknown>;
  const sent: Record<string, unknown> = {};
  for (const name of ['maxOutputTokens', 'temperature', 'topP', 'stopSequences', 'seed']) if (config[name] !== undefined) sent[name] = config[name];
  const calling = (body['toolConfig'] as { functionCallingConfig?: { mode?: string; allowedFunctionNames?: string[] } } | undefined)?.functionCallingConfig;
  if (calling?.mode !== undefined) {
    const named = calling.allowedFunctionNames;
    sent['toolChoice'] = named?.length === 1 ? { type: 'tool', name: named[0] } : ({ AUTO: 'auto', NONE: 'none', ANY: 'required' } as Record<string, string>)[calling.mode];
  }
  // Gemini has no switch: a request with tools always lets the model call several at once.
  if (Array.isArray(body['tools']) && body['tools'].length > 0) sent['parallelToolCalls'] = true;
  return sent as GenerationOptions;
}

conformanceSuite({
  name: 'GeminiChatProvider',
  streamsThinking: true,
  reportsRetryAfter: true,
  async prime(scenario: Scenario): Promise<Primed> {
    const server = await GeminiServer.start();
    servers.push(server);
    server.reply(reply(scenario));
    const timeoutMs = scenario.kind === 'error' && scenario.error === 'timeout' ? 300 : 5_000;
    const provider = new GeminiChatProvider({ baseURL: server.url, apiKey: 'gemini-conformance-key', model: 'gemini-2.5-flash', timeoutMs });
    return { provider, history: [{ role: 'user', content: [{ type: 'text', text: 'go' }] }] };
  },
  async cancelled(): Promise<boolean> {
    return (await servers.at(-1)!.lastRequest.closed) === 'aborted';
  },
  sentGeneration: () => geminiGeneration(servers.at(-1)!.lastRequest.body as Record<string, unknown>),
  sentOutput: () =>
    (servers.at(-1)!.lastRequest.body as { generationConfig?: { responseJsonSchema?: Record<string, unknown> } }).generationConfig?.responseJsonSchema,
  async after(): Promise<void> {
    await Promise.all(servers.map((server) => server.close()));
  },
});

credentialLeakSuite({ name: 'GeminiChatProvider', create: (options) => new GeminiChatProvider({ ...options, model: 'gemini-2.5-flash' }) });
