import type { JsonValue, Message, Tool } from '@kosong/core';
import { BaseChatProvider, ChatProviderError, type ProviderChanges, type ProviderGenerateOptions, type Secrets, type ThinkingEffort } from '@kosong/core/provider-kit';

import type { CacheTTL } from './cache-control.js';
import { MessagesConnection, type ConnectionOptions } from './messages-connection.js';
import type { MessagesStream } from './messages-stream.js';
import { buildRequest, type RequestSettings } from './request-body.js';
import { clampEffort } from './thinking.js';

/** `max_tokens` when the options set none. */
export const DEFAULT_MAX_TOKENS = 8192;

/** Options of an {@link AnthropicChatProvider}. */
export interface AnthropicChatProviderOptions extends ConnectionOptions {
  /** The model, e.g. `claude-sonnet-4-6` or `claude-opus-4-7`. */
  readonly model: string;
  /**
   * `max_tokens` of every request: the cap on output tokens, thinking included. The API requires
   * one; default {@link DEFAULT_MAX_TOKENS}. (With a thinking budget on a model without
   * interleaved thinking, it must exceed the budget.)
   */
  readonly defaultMaxTokens?: number;
  /**
   * Prompt caching: `{ ttl }` puts cache breakpoints on the system prompt, the last tool and the last
   * block of the last message, with a TTL of `5m` (default) or `1h`; `false` sends none.
   */
  readonly promptCache?: false | { readonly ttl?: CacheTTL };
  /** The request's `metadata`, e.g. `{ user_id: 'session-1' }`. */
  readonly metadata?: { readonly [key: string]: JsonValue };
  /** Beta flags to send in `anthropic-beta` (interleaved thinking is added where the model needs it). */
  readonly betas?: readonly string[];
  /**
   * Content of `tool_result` blocks: `blocks` (default; text and image blocks) or `text` (the text
   * parts joined with newlines).
   */
  readonly toolResultContent?: 'blocks' | 'text';
  /**
   * The `anthropic-version` header; default the SDK's own (`2026-10-21`, which has no sampling
   * parameters). `'2023-06-01'` lets `temperature` and `topP` through.
   */
  readonly apiVersion?: string;
}

/**
 * A chat provider for the Anthropic Messages API (`name` = `anthropic`), on the official
 * `@anthropic-ai/sdk`. Streams, with prompt caching on by default, thinking (adaptive or with a
 * budget, per model) and usage including cache reads and writes. Immutable: the `with…` methods
 * return copies that share the HTTP client.
 *
 * Neutral generation options (`withGeneration`, per-call `generation`): `maxOutputTokens` is
 * `max_tokens` (over `defaultMaxTokens`), `stopSequences` is `stop_sequences`, `toolChoice` is
 * `tool_choice` (`required` → `any`, a named tool → `{type: 'tool', name}`), `parallelToolCalls:
 * false` is `disable_parallel_tool_use`. `temperature` and `topP` need `apiVersion: '2023-06-01'`
 * (API version 2026-10-21 has no sampling parameters); `seed` does not exist. What the API cannot
 * take (these, forced tool use or sampling while thinking) is an `UnsupportedGenerationOptionError`
 * before any request.
 *
 * @example
 * const provider = new AnthropicChatProvider({ apiKey, model: 'claude-sonnet-4-6', defaultMaxTokens: 4096 });
 * const result = await step({ provider: provider.withThinking('high'), systemPrompt, toolset, history });
 */
export class AnthropicChatProvider extends BaseChatProvider {
  readonly name = 'anthropic';
  readonly modelName: string;
  private readonly connection: MessagesConnection;
  private readonly settings: Omit<RequestSettings, 'thinkingEffort'>;

  /** @throws {ChatProviderError} when there is neither an API key nor a client, or an option is invalid. */
  constructor(options: AnthropicChatProviderOptions) {
    super();
    const maxTokens = options.defaultMaxTokens ?? DEFAULT_MAX_TOKENS;
    if (!Number.isSafeInteger(maxTokens) || maxTokens < 1) {
      throw new ChatProviderError(`AnthropicChatProvider: \`defaultMaxTokens\` must be a positive integer, got ${String(maxTokens)}`);
    }
    const ttl = options.promptCache === false ? false : (options.promptCache?.ttl ?? '5m');
    if (ttl !== false && ttl !== '5m' && ttl !== '1h') {
      throw new ChatProviderError(`AnthropicChatProvider: \`promptCache.ttl\` must be '5m' or '1h', got ${JSON.stringify(ttl)}`);
    }
    this.modelName = options.model;
    this.connection = new MessagesConnection(options);
    this.settings = {
      provider: this.name,
      model: options.model,
      maxTokens,
      promptCache: ttl,
      metadata: options.metadata,
      betas: options.betas ?? [],
      toolResultContent: options.toolResultContent ?? 'blocks',
      apiVersion: options.apiVersion,
    };
  }

  /** The base URL requests go to. */
  get baseURL(): string {
    return this.connection.baseURL;
  }

  /** The SDK client (shared by the copies `with…` makes). */
  get client(): MessagesConnection['client'] {
    return this.connection.client;
  }

  /**
   * Streams one response. The request is sent before this resolves; the stream's `requestId` is
   * the `request-id` response header.
   *
   * @throws {ChatProviderError} (or a subclass) when the history cannot be converted or the request
   * fails; an `InvalidGenerationOptionError` / `UnsupportedGenerationOptionError` for generation
   * options it cannot send (before any request); the signal's reason when it aborts.
   */
  async generate(systemPrompt: string, tools: readonly Tool[], history: readonly Message[], options: ProviderGenerateOptions = {}): Promise<MessagesStream> {
    const generation = this.generationFor(tools, options);
    const { body, headers } = buildRequest(systemPrompt, tools, history, { ...this.settings, thinkingEffort: this.thinkingEffort }, generation, options.output);
    return this.connection.open(body, headers, options.signal);
  }

  /**
   * `withThinking` thinks with this effort (kosong spec §7.5): adaptive thinking with
   * `output_config.effort` on models that have it (Opus / Sonnet / Haiku 4.6 and later, Mythos), a
   * thinking budget on older ones (1024 / 4096 / 32000 tokens for low / medium / high); levels the
   * model lacks become `high` (`thinkingEffort` is the effort as the model gets it); `off` disables
   * thinking.
   */
  protected override thinkingChanges(effort: ThinkingEffort): ProviderChanges {
    return { thinkingEffort: clampEffort(this.modelName, effort) };
  }

  protected override describe(): Record<string, unknown> {
    return { baseURL: this.baseURL };
  }

  protected override secrets(): Secrets {
    return this.connection.secrets();
  }
}
