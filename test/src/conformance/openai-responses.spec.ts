/**
 * OpenAIResponsesChatProvider in the provider conformance suite: each scenario becomes a reply of a
 * local Responses API SSE server on 127.0.0.1 (a fresh server per scenario), and the provider talks
 * to it over real HTTP through the official `openai` SDK (`responses.create`).
 */
import type { GenerationOptions } from '@kosong/core';
import { OpenAIResponsesChatProvider } from '@kosong/provider-openai';
import { ResponsesServer, responsesReply, type ServerReply } from '@kosong/provider-openai/testing';
import { conformanceSuite, type Primed, type Scenario } from './conformance.js';
import { credentialLeakSuite } from './credential-leaks.js';

function reply(scenario: Scenario): ServerReply {
  switch (scenario.kind) {
    case 'text':
      return responsesReply([{ type: 'message', text: scenario.chunks }]);
    case 'slow':
      return { ...responsesReply([{ type: 'message', text: scenario.chunks }]), chunkDelayMs: scenario.delayMs };
    case 'think':
      return responsesReply([
        { type: 'reasoning', summary: [scenario.think], encrypted: 'enc-conformance' },
        { type: 'message', text: scenario.text },
      ]);
    case 'tool_calls':
      return responsesReply([
        { type: 'message', text: [scenario.text] },
        ...scenario.calls.map((call) => {
          const half = Math.floor(call.args.length / 2);
          return { type: 'function_call' as const, callId: call.id, name: call.name, arguments: [call.args.slice(0, half), call.args.slice(half)] };
        }),
      ]);
    case 'usage': {
      const { inputOther, inputCacheRead, output } = scenario.usage;
      return responsesReply([{ type: 'message', text: [scenario.text] }], {
        usage: { input_tokens: inputOther + inputCacheRead, output_tokens: output, input_tokens_details: { cached_tokens: inputCacheRead } },
      });
    }
    case 'error':
      if (scenario.error === 'connection') return (_request, response) => void response.socket?.destroy();
      if (scenario.error === 'timeout') return { type: 'hang' };
      return {
        type: 'json',
        status: scenario.status ?? 500,
        body: { error: { message: 'failed on purpose', type: 'server_error', param: null, code: null } },
        headers: scenario.retryAfterSeconds === undefined ? {} : { 'retry-after': String(scenario.retryAfterSeconds) },
      };
  }
}

/** The generation options of a Responses request body, in neutral terms. */
function responsesGeneration(body: Record<string, unknown>): GenerationOptions {
  const sent: Record<string, unknown> = {};
  if (body['max_output_tokens'] !== undefined) sent['maxOutputTokens'] = body['max_output_tokens'];
  if (body['temperature'] !== undefined) sent['temperature'] = body['temperature'];
  if (body['top_p'] !== undefined) sent['topP'] = body['top_p'];
  const choice = body['tool_choice'] as string | { readonly name: string } | undefined;
  if (choice !== undefined) sent['toolChoice'] = typeof choice === 'string' ? choice : { type: 'tool', name: choice.name };
  if (body['parallel_tool_calls'] !== undefined) sent['parallelToolCalls'] = body['parallel_tool_calls'];
  return sent as GenerationOptions;
}

const servers: ResponsesServer[] = [];

conformanceSuite({
  name: 'OpenAIResponsesChatProvider',
  streamsThinking: true,
  reportsRetryAfter: true,
  async prime(scenario: Scenario): Promise<Primed> {
    const server = await ResponsesServer.start();
    servers.push(server);
    server.reply(reply(scenario));
    const timeoutMs = scenario.kind === 'error' && scenario.error === 'timeout' ? 300 : 5_000;
    const provider = new OpenAIResponsesChatProvider({ baseURL: server.baseURL, apiKey: 'sk-conformance', model: 'gpt-5.1', timeoutMs });
    return { provider, history: [{ role: 'user', content: [{ type: 'text', text: 'go' }] }] };
  },
  async cancelled(): Promise<boolean> {
    return (await servers.at(-1)!.lastRequest.closed) === 'aborted';
  },
  sentGeneration: () => responsesGeneration(servers.at(-1)!.lastRequest.body as Record<string, unknown>),
  sentOutput: () => (servers.at(-1)!.lastRequest.body as { text?: { format?: { schema?: Record<string, unknown> } } }).text?.format?.schema,
  async after(): Promise<void> {
    await Promise.all(servers.map((server) => server.close()));
  },
});

credentialLeakSuite({ name: 'OpenAIResponsesChatProvider', create: (options) => new OpenAIResponsesChatProvider({ ...options, model: 'gpt-5.1' }) });
