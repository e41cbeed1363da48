import { inspect } from 'node:util';

import type { ChatProvider, JsonValue, Message, ProviderGenerateOptions, StreamedMessage, ThinkingEffort, Tool } from '@kosong/core';

import { ChatCompletionsConnection, type ConnectionOptions } from './chat-completions-connection.js';
import { ChunkConverter } from './chunk-converter.js';
import { aliasMaxTokens, generationBody, mergeGenerationOptions, type GenerationOptions } from './generation-options.js';
import { convertMessages, type MessageConversion } from './request-messages.js';
import { toolToKimi } from './request-tools.js';

/** The Moonshot AI API's base URL, the default of {@link KimiChatProvider}. */
export const KIMI_BASE_URL = 'https://api.moonshot.ai/v1';

/** Options of a {@link KimiChatProvider}. */
export interface KimiChatProviderOptions extends ConnectionOptions {
  /** The model, e.g. `kimi-k2-turbo-preview`. */
  readonly model: string;
  /**
   * Sampling and length options sent with every request. `maxTokens` is an alias of
   * `maxCompletionTokens`; no cap is sent unless one is set.
   */
  readonly generation?: GenerationOptions;
}

const KIMI_CONVERSION: MessageConversion = {
  systemRole: 'system',
  reasoningKey: 'reasoning_content',
  toolMessageContent: 'parts',
  media: 'passthrough',
};

/**
 * A chat provider for Kimi, on the Moonshot AI API (`name` = `kimi`): OpenAI Chat Completions with
 * the Moonshot extensions of kosong spec §7.2.
 *
 * - `reasoning_content` deltas stream as think parts (an empty one too); think parts in the history
 *   go back as the assistant message's `reasoning_content`;
 * - thinking is switched with `thinking: {type: 'enabled' | 'disabled'}`; the effort itself is only
 *   kept as {@link KimiChatProvider.thinkingEffort};
 * - tool schemas get missing property types filled in; tools named `$…` are Moonshot built-ins;
 * - the stream's `traceId` is the `x-trace-id` response header; usage is read where Moonshot puts
 *   it (in the choice), with `cached_tokens` as cache reads.
 *
 * Immutable: the `with…` methods return copies that share the HTTP client.
 *
 * @example
 * const kimi = new KimiChatProvider({ apiKey, model: 'kimi-k2-turbo-preview' }).withThinking('high');
 */
export class KimiChatProvider implements ChatProvider {
  readonly name = 'kimi';
  readonly modelName: string;
  /** The effort set with {@link KimiChatProvider.withThinking}, exactly as given. */
  readonly thinkingEffort: ThinkingEffort | undefined = undefined;
  private readonly connection: ChatCompletionsConnection;
  private readonly generation: GenerationOptions;

  /** @throws {ChatProviderError} when there is neither an API key nor a client. */
  constructor(options: KimiChatProviderOptions) {
    this.modelName = options.model;
    this.connection = new ChatCompletionsConnection(options, {
      provider: 'KimiChatProvider',
      baseURL: KIMI_BASE_URL,
      // The SDK would otherwise read OPENAI_ORG_ID / OPENAI_PROJECT_ID and send them to Moonshot.
      clientOptions: { organization: null, project: null },
    });
    this.generation = aliasMaxTokens(options.generation ?? {});
  }

  /** The base URL requests go to. */
  get baseURL(): string {
    return this.connection.baseURL;
  }

  /** The generation options every request carries (`extraBody` holds the `thinking` switch). */
  get generationOptions(): GenerationOptions {
    return this.generation;
  }

  /**
   * Streams one response. The request is sent before this resolves; the stream's `traceId` is the
   * `x-trace-id` response header.
   *
   * @throws {ChatProviderError} (or a subclass) when the request fails; the signal's reason when it aborts.
   */
  async generate(systemPrompt: string, tools: readonly Tool[], history: readonly Message[], options: ProviderGenerateOptions = {}): Promise<StreamedMessage> {
    const body: Record<string, JsonValue> = {
      model: this.modelName,
      messages: convertMessages(systemPrompt, history, KIMI_CONVERSION),
      tools: tools.map((tool) => toolToKimi(tool) as unknown as JsonValue),
      stream: true,
      stream_options: { include_usage: true },
      ...generationBody(this.generation),
      ...this.generation.extraBody,
    };
    const converter = new ChunkConverter({ reasoningKey: 'reasoning_content', keepEmptyReasoning: true });
    return this.connection.open(body, options.signal, converter);
  }

  /**
   * A copy with thinking switched on (`thinking: {type: 'enabled'}`) for any effort but `off`, and off
   * (`{type: 'disabled'}`) for `off`. Kimi takes no effort level: it is only remembered.
   */
  withThinking(effort: ThinkingEffort): KimiChatProvider {
    const copy = this.withExtraBody({ thinking: { type: effort === 'off' ? 'disabled' : 'enabled' } });
    return copy.copyWith({ thinkingEffort: effort });
  }

  /**
   * A copy whose generation options are these merged over the current ones; `maxTokens` sets
   * `maxCompletionTokens` unless the same options set that too.
   */
  withGenerationOptions(options: GenerationOptions): KimiChatProvider {
    return this.copyWith({ generation: mergeGenerationOptions(this.generation, aliasMaxTokens(options)) });
  }

  /**
   * A copy with these fields merged into the request body: key by key, and a `thinking` object field
   * by field (so `{thinking: {keep: 'all'}}` keeps the `type` set by `withThinking`).
   */
  withExtraBody(extraBody: { readonly [key: string]: JsonValue }): KimiChatProvider {
    return this.withGenerationOptions({ extraBody });
  }

  /** What logs and `JSON.stringify` show: never the API key. */
  toJSON(): Record<string, unknown> {
    return { name: this.name, modelName: this.modelName, baseURL: this.baseURL, thinkingEffort: this.thinkingEffort };
  }

  /** How `util.inspect` (and so `console.log`) shows the provider: as {@link toJSON}. */
  [inspect.custom](): string {
    return `KimiChatProvider ${inspect(this.toJSON())}`;
  }

  private copyWith(changes: { readonly thinkingEffort?: ThinkingEffort; readonly generation?: GenerationOptions }): KimiChatProvider {
    return Object.assign(Object.create(KimiChatProvider.prototype) as KimiChatProvider, this, changes);
  }
}
