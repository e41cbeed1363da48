import type { JsonValue, Message, Tool } from '@kosong/core';
import {
  rejectUnsupportedGenerationOptions,
  UnsupportedGenerationOptionError,
  type GenerationOptions,
  type ProviderChanges,
  type ProviderGenerateOptions,
  type StreamedMessage,
  type ThinkingEffort,
} from '@kosong/core/provider-kit';

import { ChatCompletionsConnection, type ConnectionOptions } from './chat-completions-connection.js';
import { ChunkConverter } from './chunk-converter.js';
import {
  aliasMaxTokens,
  generationBody,
  layNeutralOptions,
  mergeGenerationOptions,
  type ChatCompletionsGenerationOptions,
} from './generation-options.js';
import { OpenAIFamilyProvider } from './openai-family-provider.js';
import { convertMessages, type MessageConversion } from './request-messages.js';
import { toolToKimi } from './request-tools.js';
import { responseFormat } from './structured-output.js';

/** The Moonshot AI API's base URL, the default of {@link KimiChatProvider}. */
export const KIMI_BASE_URL = 'https://api.moonshot.ai/v1';

/** Options of a {@link KimiChatProvider}. */
export interface KimiChatProviderOptions extends ConnectionOptions {
  /** The model, e.g. `kimi-k2-turbo-preview`. */
  readonly model: string;
  /**
   * Sampling and length options sent with every request. `maxTokens` is an alias of
   * `maxCompletionTokens`; no cap is sent unless one is set. The provider-neutral options
   * (`withGeneration`, per-call `generation`) replace the fields they map to.
   */
  readonly generation?: ChatCompletionsGenerationOptions;
}

/** The Moonshot API's limits on `stop` (its documentation: at most 5 strings of at most 32 bytes). */
const MAX_STOP_SEQUENCES = 5;
const MAX_STOP_SEQUENCE_BYTES = 32;
/** The Moonshot API's temperature range is 0 to 1. */
const MAX_TEMPERATURE = 1;

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
 * Neutral generation options, as the Moonshot API documents its fields: `maxOutputTokens` as
 * `max_completion_tokens`, `temperature` (0 to 1), `top_p`, `stop` (at most 5 sequences of at most 32
 * bytes), `tool_choice`. It has no `seed` and no `parallel_tool_calls`: asking for either is an
 * `UnsupportedGenerationOptionError`, as is a `tool_choice` of `required` or a named tool while
 * thinking is enabled (the API refuses that combination). A neutral option wins over the provider's
 * own option for the same field; `extraBody` wins over both.
 *
 * Immutable: the `with…` methods return copies that share the HTTP client.
 *
 * @example
 * const kimi = new KimiChatProvider({ apiKey, model: 'kimi-k2-turbo-preview' }).withThinking('high');
 */
export class KimiChatProvider extends OpenAIFamilyProvider<ChatCompletionsGenerationOptions> {
  readonly name = 'kimi';
  readonly modelName: string;

  /** @throws {ChatProviderError} when there is neither an API key nor a client. */
  constructor(options: KimiChatProviderOptions) {
    const connection = new ChatCompletionsConnection(options, {
      provider: 'KimiChatProvider',
      baseURL: KIMI_BASE_URL,
      // The SDK would otherwise read OPENAI_ORG_ID / OPENAI_PROJECT_ID and send them to Moonshot.
      clientOptions: { organization: null, project: null },
    });
    // `extraBody` of the own options holds the `thinking` switch
    super(connection, aliasMaxTokens(options.generation ?? {}));
    this.modelName = options.model;
  }

  /**
   * Streams one response. The request is sent before this resolves; the stream's `traceId` is the
   * `x-trace-id` response header.
   *
   * @throws {ChatProviderError} (or a subclass) when the request fails; an
   * `InvalidGenerationOptionError` / `UnsupportedGenerationOptionError` for generation options it
   * cannot send (before any request); the signal's reason when it aborts.
   */
  async generate(systemPrompt: string, tools: readonly Tool[], history: readonly Message[], options: ProviderGenerateOptions = {}): Promise<StreamedMessage> {
    const generation = this.generationFor(tools, options);
    this.checkSupported(generation);
    // Kimi takes `tools: []`, and a tool choice with it (as the Python original sends).
    const own = layNeutralOptions(this.own, generation, { maxTokensField: 'max_completion_tokens', hasTools: true });
    const body: Record<string, JsonValue> = {
      model: this.modelName,
      messages: convertMessages(systemPrompt, history, KIMI_CONVERSION),
      tools: tools.map((tool) => toolToKimi(tool) as unknown as JsonValue),
      stream: true,
      stream_options: { include_usage: true },
      ...generationBody(own),
      ...(options.output === undefined ? {} : { response_format: responseFormat(options.output) }),
      ...own.extraBody,
    };
    const converter = new ChunkConverter({ reasoningKey: 'reasoning_content', keepEmptyReasoning: true });
    return this.connection.open(body, options.signal, converter);
  }

  /**
   * A copy whose generation options are these merged over the current ones; `maxTokens` sets
   * `maxCompletionTokens` unless the same options set that too.
   */
  withGenerationOptions(options: ChatCompletionsGenerationOptions): KimiChatProvider {
    return this.copyWith({ own: mergeGenerationOptions(this.own, aliasMaxTokens(options)) });
  }

  /**
   * A copy with these fields merged into the request body: key by key, and a `thinking` object field
   * by field (so `{thinking: {keep: 'all'}}` keeps the `type` set by `withThinking`).
   */
  withExtraBody(extraBody: { readonly [key: string]: JsonValue }): KimiChatProvider {
    return this.withGenerationOptions({ extraBody });
  }

  /**
   * `withThinking` switches thinking on (`thinking: {type: 'enabled'}`) for any effort but `off`, and
   * off (`{type: 'disabled'}`) for `off`. Kimi takes no effort level: `thinkingEffort` is the effort
   * exactly as given.
   */
  protected override thinkingChanges(effort: ThinkingEffort): ProviderChanges {
    return { thinkingEffort: effort, own: mergeGenerationOptions(this.own, { extraBody: { thinking: { type: effort === 'off' ? 'disabled' : 'enabled' } } }) };
  }

  /** Refuses what the Moonshot API does not take (see the class notes). */
  private checkSupported(generation: GenerationOptions): void {
    rejectUnsupportedGenerationOptions(this.name, generation, ['seed', 'parallelToolCalls']);
    const { temperature, stopSequences, toolChoice } = generation;
    if (temperature !== undefined && temperature > MAX_TEMPERATURE) {
      throw new UnsupportedGenerationOptionError(this.name, 'temperature', `Kimi takes a temperature from 0 to ${MAX_TEMPERATURE}, got ${temperature}`);
    }
    if (stopSequences !== undefined) {
      if (stopSequences.length > MAX_STOP_SEQUENCES) {
        throw new UnsupportedGenerationOptionError(this.name, 'stopSequences', `at most ${MAX_STOP_SEQUENCES} sequences, got ${stopSequences.length}`);
      }
      const long = stopSequences.find((sequence) => Buffer.byteLength(sequence, 'utf8') > MAX_STOP_SEQUENCE_BYTES);
      if (long !== undefined) {
        throw new UnsupportedGenerationOptionError(this.name, 'stopSequences', `each sequence at most ${MAX_STOP_SEQUENCE_BYTES} bytes, got ${Buffer.byteLength(long, 'utf8')}`);
      }
    }
    if (toolChoice !== undefined && toolChoice !== 'auto' && toolChoice !== 'none' && this.thinkingEnabled()) {
      const what = toolChoice === 'required' ? '"required"' : 'a named tool';
      throw new UnsupportedGenerationOptionError(this.name, 'toolChoice', `${what} while thinking is enabled`);
    }
  }

  /** Whether the request asks for thinking (`thinking.type` of `extraBody` is `enabled`). */
  private thinkingEnabled(): boolean {
    const thinking = this.own.extraBody?.['thinking'];
    return typeof thinking === 'object' && thinking !== null && !Array.isArray(thinking) && (thinking as { readonly [key: string]: JsonValue })['type'] === 'enabled';
  }
}
