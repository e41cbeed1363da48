/**
 * The OpenAI-family providers in the conformance suite: each scenario becomes a reply of a local
 * Chat Completions SSE server on 127.0.0.1 (a fresh server per scenario), and the provider talks to
 * it over real HTTP with the official SDK.
 */
import type { ChatProvider, GenerationOptions, ToolChoice } from '@kosong/core';
import { completionChunk, toolCallChunk, usageChunk, ChatCompletionsServer, type ChunkDelta, type ServerReply } from '@kosong/provider-openai/testing';
import type { ConformanceAdapter, Primed, Scenario } from './conformance.js';

/** How to build the provider under test against a server. */
export type ProviderFactory = (options: { baseURL: string; apiKey: string; model: string; timeoutMs: number }) => ChatProvider;

function reply(scenario: Scenario): ServerReply {
  const chunk = (delta: ChunkDelta, finishReason: string | null = null): object => completionChunk({ delta, finishReason });
  switch (scenario.kind) {
    case 'text':
    case 'slow':
      return {
        type: 'stream',
        chunks: [chunk({ role: 'assistant', content: '' }), ...scenario.chunks.map((content) => chunk({ content })), chunk({}, 'stop')],
        ...(scenario.kind === 'slow' ? { chunkDelayMs: scenario.delayMs } : {}),
      };
    case 'think':
      return {
        type: 'stream',
        chunks: [
          ...scenario.think.map((reasoning_content) => chunk({ reasoning_content })),
          ...scenario.text.map((content) => chunk({ content })),
          chunk({}, 'stop'),
        ],
      };
    case 'tool_calls':
      return {
        type: 'stream',
        chunks: [
          chunk({ role: 'assistant', content: scenario.text }),
          ...scenario.calls.flatMap((call, index) => {
            const half = Math.floor(call.args.length / 2);
            return [
              toolCallChunk({ index, id: call.id, type: 'function', function: { name: call.name, arguments: call.args.slice(0, half) } }),
              toolCallChunk({ index, function: { arguments: call.args.slice(half) } }),
            ];
          }),
          chunk({}, 'tool_calls'),
        ],
      };
    case 'usage': {
      const { inputOther, inputCacheRead, output } = scenario.usage;
      return {
        type: 'stream',
        chunks: [
          chunk({ content: scenario.text }),
          chunk({}, 'stop'),
          usageChunk({ prompt_tokens: inputOther + inputCacheRead, completion_tokens: output, prompt_tokens_details: { cached_tokens: inputCacheRead } }),
        ],
      };
    }
    case 'error':
      if (scenario.error === 'connection') return (_request, response) => void response.socket?.destroy();
      if (scenario.error === 'timeout') return { type: 'hang' };
      return {
        type: 'json',
        status: scenario.status ?? 500,
        body: { error: { message: 'failed on purpose', type: 'server_error' } },
        headers: scenario.retryAfterSeconds === undefined ? {} : { 'retry-after': String(scenario.retryAfterSeconds) },
      };
  }
}

/** The generation options of a Chat Completions request body, in neutral terms. */
export function chatCompletionsGeneration(body: Record<string, unknown>): GenerationOptions {
  const sent: Record<string, unknown> = {};
  const cap = body['max_completion_tokens'] ?? body['max_tokens'];
  if (cap !== undefined) sent['maxOutputTokens'] = cap;
  if (body['temperature'] !== undefined) sent['temperature'] = body['temperature'];
  if (body['top_p'] !== undefined) sent['topP'] = body['top_p'];
  const stop = body['stop'];
  if (stop !== undefined) sent['stopSequences'] = typeof stop === 'string' ? [stop] : stop;
  if (body['seed'] !== undefined) sent['seed'] = body['seed'];
  const choice = body['tool_choice'] as string | { readonly function: { readonly name: string } } | undefined;
  if (choice !== undefined) sent['toolChoice'] = typeof choice === 'string' ? choice : ({ type: 'tool', name: choice.function.name } satisfies ToolChoice);
  if (body['parallel_tool_calls'] !== undefined) sent['parallelToolCalls'] = body['parallel_tool_calls'];
  return sent as GenerationOptions;
}

/** An adapter for a provider of the OpenAI family. */
export function openAIFamilyAdapter(name: string, streamsThinking: boolean, create: ProviderFactory): ConformanceAdapter {
  const servers: ChatCompletionsServer[] = [];
  return {
    name,
    streamsThinking,
    reportsRetryAfter: true,
    async prime(scenario: Scenario): Promise<Primed> {
      const server = await ChatCompletionsServer.start();
      servers.push(server);
      server.reply(reply(scenario));
      const timeoutMs = scenario.kind === 'error' && scenario.error === 'timeout' ? 300 : 5_000;
      const provider = create({ baseURL: server.baseURL, apiKey: 'sk-conformance', model: 'test-model', timeoutMs });
      return { provider, history: [{ role: 'user', content: [{ type: 'text', text: 'go' }] }] };
    },
    async cancelled(): Promise<boolean> {
      return (await servers.at(-1)!.lastRequest.closed) === 'aborted';
    },
    sentGeneration(): GenerationOptions {
      return chatCompletionsGeneration(servers.at(-1)!.lastRequest.body as Record<string, unknown>);
    },
    sentOutput: () => (servers.at(-1)!.lastRequest.body as { response_format?: { json_schema?: { schema?: Record<string, unknown> } } }).response_format?.json_schema?.schema,
    async after(): Promise<void> {
      await Promise.all(servers.map((server) => server.close()));
    },
  };
}
