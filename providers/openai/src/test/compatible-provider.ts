/**
 * The worked example of "Writing a provider" (docs/writing-a-provider.md): a provider for an
 * OpenAI-compatible Chat Completions endpoint on `fetch` and the provider kit, with no SDK. It is
 * its wire mapping and nothing else; `writing-a-provider.spec.ts` runs it against the local Chat
 * Completions server. (The package's `OpenAIChatProvider` is the full version: the `openai` SDK,
 * media, reasoning content, interleaved tool calls, more options.)
 */
import { extractText, textPart, toolCall, toolCallPart, type Message, type StreamedMessagePart, type Tool } from '@kosong/core';
import {
  APIConnectionError,
  APITimeoutError,
  BaseChatProvider,
  ChatProviderError,
  credentialHeaderValues,
  EventStream,
  httpStatusError,
  readBodyStart,
  redactSecrets,
  sameOriginRedirects,
  sdkErrorConverter,
  SseJsonDecoder,
  tokenUsage,
  UnsupportedGenerationOptionError,
  type FinishReason,
  type GenerationOptions,
  type OutputFormat,
  type ProviderChanges,
  type ProviderGenerateOptions,
  type Secrets,
  type StreamedMessage,
  type StreamEventConverter,
  type ThinkingEffort,
  type TokenUsage,
} from '@kosong/core/provider-kit';
import { createParser } from 'eventsource-parser';

/** Options of a {@link CompatibleChatProvider}. */
export interface CompatibleChatProviderOptions {
  /** The endpoint's base URL, e.g. `http://localhost:8000/v1`. */
  readonly baseURL: string;
  /** Sent as `Authorization: Bearer …`. */
  readonly apiKey: string;
  readonly model: string;
  /** Headers sent with every request (a gateway's key, say: kept out of errors like the API key). */
  readonly defaultHeaders?: Readonly<Record<string, string>>;
  /** How long to wait for the response, and then for each next chunk of the stream, in ms; default 60 000. */
  readonly timeoutMs?: number;
}

/** A provider for an OpenAI-compatible Chat Completions endpoint. */
export class CompatibleChatProvider extends BaseChatProvider {
  readonly name = 'compatible';
  readonly modelName: string;
  private readonly baseURL: string;
  private readonly apiKey: string;
  private readonly headers: Readonly<Record<string, string>>;
  private readonly timeoutMs: number;
  /** Credentials never follow a redirect to another origin. */
  private readonly fetch = sameOriginRedirects((input, init) => fetch(input, init));

  constructor(options: CompatibleChatProviderOptions) {
    super();
    this.modelName = options.model;
    this.baseURL = options.baseURL.replace(/\/+$/, '');
    this.apiKey = options.apiKey;
    this.headers = options.defaultHeaders ?? {};
    this.timeoutMs = options.timeoutMs ?? 60_000;
  }

  async generate(systemPrompt: string, tools: readonly Tool[], history: readonly Message[], options: ProviderGenerateOptions = {}): Promise<StreamedMessage> {
    const { signal } = options;
    signal?.throwIfAborted();
    // The options core resolved for this call (merged, checked): not resolved again.
    const generation = this.generationFor(tools, options);
    const body = requestBody(this.modelName, systemPrompt, tools, history, generation, this.thinkingEffort, options.output);
    const request = new AbortController();
    const timer = setTimeout(() => request.abort(new APITimeoutError(`No response within ${this.timeoutMs} ms`)), this.timeoutMs);
    let response: Response;
    try {
      response = await this.fetch(`${this.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { ...this.headers, authorization: `Bearer ${this.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: signal === undefined ? request.signal : AbortSignal.any([signal, request.signal]),
      });
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      throw convertError(request.signal.aborted ? request.signal.reason : error, this.secrets());
    } finally {
      clearTimeout(timer);
    }
    if (!response.ok) throw await statusError(response, this.secrets());
    return new EventStream(
      {
        body: response.body,
        signal,
        idleTimeoutMs: this.timeoutMs,
        abortRequest: (reason) => request.abort(reason),
        convertError: (error) => convertError(error, this.secrets()),
        what: 'A compatible stream',
        traceId: response.headers.get('x-trace-id') ?? undefined,
      },
      new SseJsonDecoder(new ChunkEvents(), { createParser }),
    );
  }

  /** The API's `reasoning_effort` has no `max`: it is sent (and kept) as `xhigh`. */
  protected override thinkingChanges(effort: ThinkingEffort): ProviderChanges {
    return { thinkingEffort: effort === 'max' ? 'xhigh' : effort };
  }

  protected override secrets(): Secrets {
    return [this.apiKey, ...credentialHeaderValues(this.headers)];
  }

  protected override describe(): Record<string, unknown> {
    return { baseURL: this.baseURL };
  }
}

/** The request body: the history, the tools and the options in Chat Completions' terms. */
function requestBody(
  model: string,
  systemPrompt: string,
  tools: readonly Tool[],
  history: readonly Message[],
  generation: GenerationOptions,
  effort: ThinkingEffort | undefined,
  output: OutputFormat | undefined,
): Record<string, unknown> {
  if ((generation.stopSequences?.length ?? 0) > 4) throw new UnsupportedGenerationOptionError('compatible', 'stopSequences', 'at most 4 sequences');
  const body: Record<string, unknown> = {
    model,
    stream: true,
    stream_options: { include_usage: true },
    messages: [{ role: 'system', content: systemPrompt }, ...history.map(messageToWire)],
  };
  if (tools.length > 0) body['tools'] = tools.map((tool) => ({ type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.parameters } }));
  const { maxOutputTokens, temperature, topP, stopSequences, seed, toolChoice, parallelToolCalls } = generation;
  if (maxOutputTokens !== undefined) body['max_completion_tokens'] = maxOutputTokens;
  if (temperature !== undefined) body['temperature'] = temperature;
  if (topP !== undefined) body['top_p'] = topP;
  if (stopSequences !== undefined) body['stop'] = stopSequences;
  if (seed !== undefined) body['seed'] = seed;
  if (toolChoice !== undefined) body['tool_choice'] = typeof toolChoice === 'string' ? toolChoice : { type: 'function', function: { name: toolChoice.name } };
  if (parallelToolCalls !== undefined && tools.length > 0) body['parallel_tool_calls'] = parallelToolCalls;
  if (effort !== undefined && effort !== 'off') body['reasoning_effort'] = effort;
  if (output !== undefined) body['response_format'] = { type: 'json_schema', json_schema: { name: output.name, schema: output.schema } };
  return body;
}

function messageToWire(message: Message): Record<string, unknown> {
  const wire: Record<string, unknown> = { role: message.role, content: extractText(message) };
  if (message.toolCalls !== undefined) {
    wire['tool_calls'] = message.toolCalls.map((call) => ({ id: call.id, type: 'function', function: { name: call.function.name, arguments: call.function.arguments ?? '' } }));
  }
  if (message.toolCallId !== undefined) wire['tool_call_id'] = message.toolCallId;
  return wire;
}

const FINISH_REASONS: Readonly<Record<string, FinishReason>> = { stop: 'stop', tool_calls: 'tool_calls', length: 'length', content_filter: 'content_filter' };

/** The stream: each `chat.completion.chunk` into parts (tool calls one after the other). */
class ChunkEvents implements StreamEventConverter {
  id: string | undefined;
  usage: TokenUsage | undefined;
  finishReason: FinishReason | undefined;

  push(event: unknown, out: StreamedMessagePart[]): void {
    const chunk = event as Chunk;
    if (chunk.error !== undefined) throw new ChatProviderError(`The stream sent an error: ${JSON.stringify(chunk.error)}`);
    if (chunk.id) this.id = chunk.id;
    if (chunk.usage) this.usage = tokenUsage({ inputOther: chunk.usage.prompt_tokens, output: chunk.usage.completion_tokens });
    const choice = chunk.choices?.[0];
    if (choice === undefined) return;
    if (choice.delta?.content) out.push(textPart(choice.delta.content));
    for (const call of choice.delta?.tool_calls ?? []) {
      if (call.id && call.function?.name) out.push(toolCall(call.id, call.function.name, call.function.arguments ?? ''));
      else if (call.function?.arguments) out.push(toolCallPart(call.function.arguments));
    }
    if (choice.finish_reason) this.finishReason = FINISH_REASONS[choice.finish_reason] ?? 'other';
  }

  end(): void {
    if (this.finishReason === undefined) throw new APIConnectionError('The stream ended before the response was complete (no finish_reason)');
  }
}

/** What the converter reads of a chunk. */
interface Chunk {
  readonly id?: string;
  readonly error?: unknown;
  readonly usage?: { readonly prompt_tokens: number; readonly completion_tokens: number };
  readonly choices?: readonly {
    readonly delta?: {
      readonly content?: string | null;
      readonly tool_calls?: readonly { readonly id?: string; readonly function?: { readonly name?: string; readonly arguments?: string } }[];
    };
    readonly finish_reason?: string | null;
  }[];
}

/** No SDK: `fetch`'s failures are what the kit's skeleton maps (timeouts, broken connections). */
const convertError = sdkErrorConverter({ fallbackPrefix: 'Compatible API error' });

/** A failed HTTP status: an `APIStatusError` with the start of the body, the request id and `retry-after`. */
async function statusError(response: Response, secrets: Secrets): Promise<ChatProviderError> {
  const { text } = await readBodyStart(response.body, 1024);
  const redact = (value: string): string => redactSecrets(value, secrets);
  return httpStatusError(response.status, redact(`HTTP ${response.status}: ${text}`), {
    headers: response.headers,
    requestId: response.headers.get('x-request-id') ?? undefined,
    redact,
  });
}
