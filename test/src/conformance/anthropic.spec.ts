/**
 * AnthropicChatProvider in the provider conformance suite: each scenario becomes a reply of a local
 * Messages API SSE server on 127.0.0.1 (a fresh server per scenario), and the provider talks to it
 * over real HTTP through the official SDK.
 */
import type { GenerationOptions } from '@kosong/core';
import { AnthropicChatProvider } from '@kosong/provider-anthropic';
import { apiError, messageReply, MessagesServer, textReply, type ServerReply } from '@kosong/provider-anthropic/testing';
import { conformanceSuite, type ConformanceAdapter, type Primed, type Scenario } from './conformance.js';
import { credentialLeakSuite } from './credential-leaks.js';

function reply(scenario: Scenario): ServerReply {
  switch (scenario.kind) {
    case 'text':
      return textReply(scenario.chunks);
    case 'slow':
      return { ...textReply(scenario.chunks), eventDelayMs: scenario.delayMs };
    case 'think':
      return messageReply([
        { type: 'thinking', thinking: scenario.think, signature: 'sig_conformance' },
        { type: 'text', text: scenario.text },
      ]);
    case 'tool_calls':
      return messageReply([
        { type: 'text', text: [scenario.text] },
        ...scenario.calls.map((call) => {
          const half = Math.floor(call.args.length / 2);
          return { type: 'tool_use' as const, id: call.id, name: call.name, input: [call.args.slice(0, half), call.args.slice(half)] };
        }),
      ]);
    case 'usage': {
      const { inputOther, inputCacheRead, inputCacheCreation, output } = scenario.usage;
      return textReply([scenario.text], {
        startUsage: { input_tokens: inputOther, cache_read_input_tokens: inputCacheRead, cache_creation_input_tokens: inputCacheCreation, output_tokens: 1 },
        deltaUsage: { output_tokens: output },
      });
    }
    case 'error':
      if (scenario.error === 'connection') return (_request, response) => void response.socket?.destroy();
      if (scenario.error === 'timeout') return { type: 'hang' };
      return {
        type: 'body',
        status: scenario.status ?? 500,
        body: apiError(scenario.status === 429 ? 'rate_limit_error' : 'api_error', 'failed on purpose'),
        headers: scenario.retryAfterSeconds === undefined ? {} : { 'retry-after': String(scenario.retryAfterSeconds) },
      };
  }
}

const servers: MessagesServer[] = [];

/** The generation options of a Messages API request body, in neutral terms. */
function messagesGeneration(body: Record<string, unknown>): GenerationOptions {
  const sent: Record<string, unknown> = {};
  if (body['max_tokens'] !== undefined) sent['maxOutputTokens'] = body['max_tokens'];
  if (body['temperature'] !== undefined) sent['temperature'] = body['temperature'];
  if (body['top_p'] !== undefined) sent['topP'] = body['top_p'];
  if (body['stop_sequences'] !== undefined) sent['stopSequences'] = body['stop_sequences'];
  const choice = body['tool_choice'] as { type: string; name?: string; disable_parallel_tool_use?: boolean } | undefined;
  if (choice !== undefined) sent['toolChoice'] = choice.type === 'tool' ? { type: 'tool', name: choice.name } : choice.type === 'any' ? 'required' : choice.type;
  // Parallel tool use is the API's default when tools are offered; only `disable_parallel_tool_use` turns it off.
  if (Array.isArray(body['tools']) && body['tools'].length > 0) sent['parallelToolCalls'] = choice?.disable_parallel_tool_use !== true;
  return sent as GenerationOptions;
}

const adapter: ConformanceAdapter = {
  name: 'AnthropicChatProvider',
  streamsThinking: true,
  reportsRetryAfter: true,
  async prime(scenario: Scenario): Promise<Primed> {
    const server = await MessagesServer.start();
    servers.push(server);
    server.reply(reply(scenario));
    const timeoutMs = scenario.kind === 'error' && scenario.error === 'timeout' ? 300 : 5_000;
    const provider = new AnthropicChatProvider({ baseURL: server.url, apiKey: 'sk-ant-conformance', model: 'claude-sonnet-4-6', timeoutMs });
    return { provider, history: [{ role: 'user', content: [{ type: 'text', text: 'go' }] }] };
  },
  async cancelled(): Promise<boolean> {
    return (await servers.at(-1)!.lastRequest.closed) === 'aborted';
  },
  sentGeneration: () => messagesGeneration(servers.at(-1)!.lastRequest.body as Record<string, unknown>),
  sentOutput: () => (servers.at(-1)!.lastRequest.body as { output_config?: { format?: { schema?: Record<string, unknown> } } }).output_config?.format?.schema,
  async after(): Promise<void> {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  },
};

conformanceSuite(adapter);
credentialLeakSuite({ name: 'AnthropicChatProvider', create: (options) => new AnthropicChatProvider({ ...options, model: 'claude-sonnet-4-6' }) });
