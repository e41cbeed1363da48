/**
 * The AI SDK bridge (`@kosong/provider-ai-sdk`) in the provider conformance suite, with real
 * provider packages of the AI SDK over real HTTP: `@ai-sdk/openai` (Chat Completions) and
 * `@ai-sdk/openai-compatible` against the local Chat Completions server, `@ai-sdk/anthropic`
 * against the local Messages API server, `@ai-sdk/google` against the local Gemini server — the
 * servers the first-party providers are tested against. Each package sends its requests with a
 * `fetch` that follows redirects only within an origin (`sameOriginRedirects`), as the bridge's
 * README tells users to.
 *
 * @module
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { ChatProvider, GenerationOptions } from '@kosong/core';
import type { ServerResponse } from 'node:http';
import { sameOriginRedirects } from '@kosong/core/provider-kit';
import { aiSdkProvider, type AiSdkLanguageModel } from '@kosong/provider-ai-sdk';
import { apiError, messageReply, MessagesServer, textReply as anthropicText, type ServerReply as MessagesReply } from '@kosong/provider-anthropic/testing';
import { errorBody, GeminiServer, wireChunk, wireFunctionCall, wireText, wireThought, type ServerReply as GeminiReply } from '@kosong/provider-google/testing';

import type { ConformanceAdapter, Primed, Scenario } from './conformance.js';
import { openAIFamilyAdapter } from './openai-family.js';

/** Where a package sends its requests, and with which key. */
export interface Endpoint {
  readonly baseURL: string;
  readonly apiKey: string;
}

/** The `fetch` every package gets: credentials never follow a redirect to another origin. */
const FETCH = sameOriginRedirects((input, init) => fetch(input, init));

/** The four packages, each making a model of the local server's API. */
export const PACKAGES = {
  '@ai-sdk/openai': (endpoint: Endpoint, model: string): AiSdkLanguageModel => createOpenAI({ ...endpoint, fetch: FETCH }).chat(model),
  '@ai-sdk/openai-compatible': (endpoint: Endpoint, model: string): AiSdkLanguageModel =>
    createOpenAICompatible({ name: 'local', ...endpoint, fetch: FETCH, includeUsage: true, supportsStructuredOutputs: true }).chatModel(model),
  '@ai-sdk/anthropic': (endpoint: Endpoint, model: string): AiSdkLanguageModel => createAnthropic({ ...endpoint, fetch: FETCH }).languageModel(model),
  '@ai-sdk/google': (endpoint: Endpoint, model: string): AiSdkLanguageModel => createGoogleGenerativeAI({ ...endpoint, fetch: FETCH }).languageModel(model),
} as const;

/** The bridge over a package's model. */
export function bridge(pkg: keyof typeof PACKAGES, endpoint: Endpoint, model: string, timeoutMs = 5_000): ChatProvider {
  return aiSdkProvider(PACKAGES[pkg](endpoint, model), { timeoutMs, env: {} });
}

/** `@ai-sdk/openai` or `@ai-sdk/openai-compatible` against the local Chat Completions server. */
export function chatCompletionsAdapter(pkg: '@ai-sdk/openai' | '@ai-sdk/openai-compatible'): ConformanceAdapter {
  // the compatible package reads `reasoning_content` (as DeepSeek, vLLM and Kimi send it); OpenAI's does not
  return openAIFamilyAdapter(`aiSdkProvider(${pkg})`, pkg === '@ai-sdk/openai-compatible', ({ baseURL, apiKey, model, timeoutMs }) => bridge(pkg, { baseURL, apiKey }, model, timeoutMs));
}

/** A scenario as a Messages API reply. */
export function messagesReply(scenario: Scenario): MessagesReply {
  switch (scenario.kind) {
    case 'text':
      return anthropicText(scenario.chunks);
    case 'slow':
      return { ...anthropicText(scenario.chunks), eventDelayMs: scenario.delayMs };
    case 'think':
      return messageReply([
        { type: 'thinking', thinking: scenario.think, signature: 'sig_ai_sdk' },
        { type: 'text', text: scenario.text },
      ]);
    case 'tool_calls':
      return messageReply([{ type: 'text', text: [scenario.text] }, ...scenario.calls.map((call) => ({ type: 'tool_use' as const, id: call.id, name: call.name, input: halves(call.args) }))]);
    case 'usage': {
      const { inputOther, inputCacheRead, inputCacheCreation, output } = scenario.usage;
      return anthropicText([scenario.text], {
        startUsage: { input_tokens: inputOther, cache_read_input_tokens: inputCacheRead, cache_creation_input_tokens: inputCacheCreation, output_tokens: 1 },
        deltaUsage: { output_tokens: output },
      });
    }
    case 'error':
      return failure(scenario, (status, headers) => ({ type: 'body', status, headers, body: apiError(status === 429 ? 'rate_limit_error' : 'api_error', 'failed on purpose') }));
  }
}

/** A scenario as a Gemini reply. */
export function geminiReply(scenario: Scenario): GeminiReply {
  const last = (index: number, count: number): object => (index === count - 1 ? { finishReason: 'STOP' } : {});
  switch (scenario.kind) {
    case 'text':
    case 'slow':
      return {
        type: 'stream',
        events: scenario.chunks.map((text, index) => wireChunk({ parts: [wireText(text)], ...last(index, scenario.chunks.length) })),
        ...(scenario.kind === 'slow' ? { eventDelayMs: scenario.delayMs } : {}),
      };
    case 'think':
      return { type: 'stream', events: [...scenario.think.map((text) => wireChunk({ parts: [wireThought(text)] })), ...scenario.text.map((text, index) => wireChunk({ parts: [wireText(text)], ...last(index, scenario.text.length) }))] };
    case 'tool_calls':
      return {
        type: 'stream',
        events: [wireChunk({ parts: [wireText(scenario.text)] }), ...scenario.calls.map((call, index) => wireChunk({ parts: [wireFunctionCall(call.name, JSON.parse(call.args) as Record<string, unknown>, { id: call.id })], ...last(index, scenario.calls.length) }))],
      };
    case 'usage': {
      const { inputOther, inputCacheRead, output } = scenario.usage;
      const usage = { promptTokenCount: inputOther + inputCacheRead, cachedContentTokenCount: inputCacheRead, candidatesTokenCount: output - 2, thoughtsTokenCount: 2 };
      return { type: 'stream', events: [wireChunk({ parts: [wireText(scenario.text)], finishReason: 'STOP', usage })] };
    }
    case 'error':
      return failure(scenario, (status, headers) => ({
        type: 'body',
        status,
        headers,
        body: errorBody(status, status === 429 ? 'RESOURCE_EXHAUSTED' : 'INTERNAL', 'failed on purpose'),
      }));
  }
}

/** An error scenario: the connection cut, no answer, or a status (with `retry-after`). */
function failure<R>(scenario: Extract<Scenario, { kind: 'error' }>, status: (status: number, headers: Record<string, string>) => R): R | { readonly type: 'hang' } | ((request: unknown, response: ServerResponse) => void) {
  if (scenario.error === 'connection') return (_request, response) => void response.socket?.destroy();
  if (scenario.error === 'timeout') return { type: 'hang' };
  return status(scenario.status ?? 500, scenario.retryAfterSeconds === undefined ? {} : { 'retry-after': String(scenario.retryAfterSeconds) });
}

function halves(text: string): string[] {
  const half = Math.floor(text.length / 2);
  return [text.slice(0, half), text.slice(half)];
}

/** The generation options of a Messages API body, in neutral terms (what the suite reads back). */
function messagesBodyGeneration(body: Record<string, unknown>): GenerationOptions {
  const choice = body['tool_choice'] as { type: string; name?: string; disable_parallel_tool_use?: boolean } | undefined;
  const tools = Array.isArray(body['tools']) && body['tools'].length > 0;
  return withoutUndefined({
    maxOutputTokens: body['max_tokens'],
    temperature: body['temperature'],
    topP: body['top_p'],
    stopSequences: body['stop_sequences'],
    toolChoice: choice === undefined ? undefined : choice.type === 'tool' ? { type: 'tool', name: choice.name } : choice.type === 'any' ? 'required' : choice.type,
    // parallel tool use is the API's default when tools are offered; only `disable_parallel_tool_use` turns it off
    parallelToolCalls: tools ? choice?.disable_parallel_tool_use !== true : undefined,
  });
}

/** The generation options of a Gemini body (`generationConfig`, `toolConfig`), in neutral terms. */
function geminiBodyGeneration(body: Record<string, unknown>): GenerationOptions {
  const config = (body['generationConfig'] ?? {}) as Record<string, unknown>;
  const calling = (body['toolConfig'] as { functionCallingConfig?: { mode?: string; allowedFunctionNames?: string[] } } | undefined)?.functionCallingConfig;
  const modes: Record<string, string> = { AUTO: 'auto', NONE: 'none', ANY: 'required' };
  const named = calling?.allowedFunctionNames;
  return withoutUndefined({
    maxOutputTokens: config['maxOutputTokens'],
    temperature: config['temperature'],
    topP: config['topP'],
    stopSequences: config['stopSequences'],
    seed: config['seed'],
    toolChoice: calling?.mode === undefined ? undefined : named?.length === 1 ? { type: 'tool', name: named[0] } : modes[calling.mode],
  });
}

function withoutUndefined(fields: Record<string, unknown>): GenerationOptions {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as GenerationOptions;
}

/** A server of one API, as the adapters use it. */
interface LocalServer<R> {
  readonly url: string;
  readonly lastRequest: { readonly body: unknown; readonly closed: Promise<'completed' | 'aborted'> };
  reply(...replies: R[]): unknown;
  close(): Promise<void>;
}

/** An adapter of a package whose API has a server of its own: a fresh server per scenario. */
function serverAdapter<R>(options: {
  readonly pkg: '@ai-sdk/anthropic' | '@ai-sdk/google';
  readonly model: string;
  readonly start: () => Promise<LocalServer<R>>;
  readonly path: string;
  readonly reply: (scenario: Scenario) => R;
  readonly generation: (body: Record<string, unknown>) => GenerationOptions;
  readonly output: (body: Record<string, unknown>) => Record<string, unknown> | undefined;
}): ConformanceAdapter {
  const servers: LocalServer<R>[] = [];
  const last = (): Record<string, unknown> => servers.at(-1)!.lastRequest.body as Record<string, unknown>;
  return {
    name: `aiSdkProvider(${options.pkg})`,
    streamsThinking: true,
    reportsRetryAfter: true,
    async prime(scenario: Scenario): Promise<Primed> {
      const server = await options.start();
      servers.push(server);
      server.reply(options.reply(scenario));
      const timeoutMs = scenario.kind === 'error' && scenario.error === 'timeout' ? 300 : 5_000;
      const provider = bridge(options.pkg, { baseURL: `${server.url}${options.path}`, apiKey: 'sk-ai-sdk-conformance-0123456789' }, options.model, timeoutMs);
      return { provider, history: [{ role: 'user', content: [{ type: 'text', text: 'go' }] }] };
    },
    cancelled: async () => (await servers.at(-1)!.lastRequest.closed) === 'aborted',
    sentGeneration: () => options.generation(last()),
    sentOutput: () => options.output(last()),
    async after(): Promise<void> {
      await Promise.all(servers.splice(0).map((server) => server.close()));
    },
  };
}

/** `@ai-sdk/anthropic` against the local Messages API server. */
export function anthropicAdapter(): ConformanceAdapter {
  return serverAdapter({
    pkg: '@ai-sdk/anthropic',
    model: 'claude-sonnet-4-5',
    start: () => MessagesServer.start(),
    path: '/v1',
    reply: messagesReply,
    generation: messagesBodyGeneration,
    output: (body) => (body as { output_config?: { format?: { schema?: Record<string, unknown> } }; output_format?: { schema?: Record<string, unknown> } }).output_config?.format?.schema ?? (body as { output_format?: { schema?: Record<string, unknown> } }).output_format?.schema,
  });
}

/** `@ai-sdk/google` against the local Gemini server. */
export function googleAdapter(): ConformanceAdapter {
  return serverAdapter({
    pkg: '@ai-sdk/google',
    model: 'gemini-2.5-flash',
    start: () => GeminiServer.start(),
    path: '/v1beta',
    reply: geminiReply,
    generation: geminiBodyGeneration,
    output: (body) => {
      const config = (body as { generationConfig?: { responseJsonSchema?: Record<string, unknown>; responseSchema?: Record<string, unknown> } }).generationConfig;
      return config?.responseJsonSchema ?? config?.responseSchema;
    },
  });
}
