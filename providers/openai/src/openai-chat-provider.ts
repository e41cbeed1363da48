import { inspect } from 'node:util';

import type { ChatProvider, JsonValue, Message, ProviderGenerateOptions, StreamedMessage, ThinkingEffort, Tool } from '@kosong/core';

import { ChatCompletionsConnection, type ConnectionOptions } from './chat-completions-connection.js';
import { ChunkConverter } from './chunk-converter.js';
import { generationBody, mergeGenerationOptions, type GenerationOptions } from './generation-options.js';
import { reasoningEffortToThinkingEffort, thinkingEffortToReasoningEffort } from './reasoning-effort.js';
import { convertMessages, type MessageConversion } from './request-messages.js';
import { toolToOpenAI } from './request-tools.js';

/** The OpenAI API's base URL, the default of {@link OpenAIChatProvider}. */
export const OPENAI_BASE_URL = 'https://api.openai.com/v1';

/** Options of an {@link OpenAIChatProvider}. */
export interface OpenAIChatProviderOptions extends ConnectionOptions {
  /** The model, e.g. `gpt-4.1`. */
  readonly model: string;
  /** Sampling and length options sent with every request. */
  readonly generation?: GenerationOptions;
  /** The role of the system prompt (and of `system` messages): `system` (default) or `developer`. */
  readonly systemRole?: 'system' | 'developer';
  /**
   * The field that carries reasoning on compatible servers (e.g. `reasoning_content` for DeepSeek
   * and vLLM, `reasoning` for OpenRouter and Ollama). When set, such deltas stream as think parts,
   * think parts in the history are sent back in it, and a history with think parts asks for
   * `reasoning_effort: "medium"` unless an effort was set. Unset (default): think parts are not sent.
   */
  readonly reasoningKey?: string;
  /**
   * Content of `tool` messages: `parts` (default; a string for one text part, else a list) or `text`
   * (text parts joined with newlines: the official API takes only text in tool messages).
   */
  readonly toolMessageContent?: 'parts' | 'text';
  /**
   * Audio and video parts the Chat Completions API has no shape for (audio other than a base64 WAV or
   * MP3 `data:` URI; any video): `error` (default) rejects `generate`, `passthrough` sends them as
   * `audio_url` / `video_url` parts (vLLM accepts them).
   */
  readonly unsupportedMedia?: 'error' | 'passthrough';
  /**
   * What `withThinking('off')` sends: `omit` (default) sends no `reasoning_effort` (models without
   * reasoning reject the field), `none` sends `reasoning_effort: "none"` (GPT-5.1 and later).
   */
  readonly thinkingOff?: 'omit' | 'none';
}

/**
 * A chat provider for the OpenAI Chat Completions API and any endpoint compatible with it
 * (`name` = `openai`). Streams, with usage. Immutable: the `with…` methods return copies that share
 * the HTTP client.
 *
 * @example
 * const provider = new OpenAIChatProvider({ apiKey, model: 'gpt-4.1', generation: { temperature: 0.2 } });
 * const result = await step({ provider: provider.withThinking('high'), systemPrompt, toolset, history });
 */
export class OpenAIChatProvider implements ChatProvider {
  readonly name = 'openai';
  readonly modelName: string;
  /** The effort set with {@link OpenAIChatProvider.withThinking}, as sent: `max` reads `xhigh`. */
  readonly thinkingEffort: ThinkingEffort | undefined = undefined;
  private readonly connection: ChatCompletionsConnection;
  private readonly generation: GenerationOptions;
  private readonly conversion: MessageConversion;
  private readonly thinkingOff: 'omit' | 'none';

  /** @throws {ChatProviderError} when there is neither an API key nor a client. */
  constructor(options: OpenAIChatProviderOptions) {
    this.modelName = options.model;
    this.connection = new ChatCompletionsConnection(options, { provider: 'OpenAIChatProvider', baseURL: OPENAI_BASE_URL });
    this.generation = options.generation ?? {};
    this.conversion = {
      systemRole: options.systemRole ?? 'system',
      reasoningKey: options.reasoningKey,
      toolMessageContent: options.toolMessageContent ?? 'parts',
      media: options.unsupportedMedia === 'passthrough' ? 'passthrough' : 'openai',
    };
    this.thinkingOff = options.thinkingOff ?? 'omit';
  }

  /** The base URL requests go to. */
  get baseURL(): string {
    return this.connection.baseURL;
  }

  /** The generation options every request carries. */
  get generationOptions(): GenerationOptions {
    return this.generation;
  }

  /**
   * Streams one response. The request is sent before this resolves; the stream's `traceId` is the
   * `x-trace-id` response header, if any.
   *
   * @throws {ChatProviderError} (or a subclass) when the history cannot be converted or the request
   * fails; the signal's reason when it aborts.
   */
  async generate(systemPrompt: string, tools: readonly Tool[], history: readonly Message[], options: ProviderGenerateOptions = {}): Promise<StreamedMessage> {
    const body = this.buildBody(systemPrompt, tools, history);
    const converter = new ChunkConverter({ reasoningKey: this.conversion.reasoningKey, keepEmptyReasoning: false });
    return this.connection.open(body, options.signal, converter);
  }

  /**
   * A copy that asks for this thinking effort as `reasoning_effort` (spec §7.1): `low`, `medium`,
   * `high` and `xhigh` as they are, `max` as `xhigh`, `off` per the `thinkingOff` option.
   */
  withThinking(effort: ThinkingEffort): OpenAIChatProvider {
    return this.copyWith({ thinkingEffort: reasoningEffortToThinkingEffort(thinkingEffortToReasoningEffort(effort)) });
  }

  /** A copy whose generation options are these merged over the current ones (`extraBody` key by key). */
  withGenerationOptions(options: GenerationOptions): OpenAIChatProvider {
    return this.copyWith({ generation: mergeGenerationOptions(this.generation, options) });
  }

  /** What logs and `JSON.stringify` show: never the API key. */
  toJSON(): Record<string, unknown> {
    return { name: this.name, modelName: this.modelName, baseURL: this.baseURL, thinkingEffort: this.thinkingEffort };
  }

  /** How `util.inspect` (and so `console.log`) shows the provider: as {@link toJSON}. */
  [inspect.custom](): string {
    return `OpenAIChatProvider ${inspect(this.toJSON())}`;
  }

  private buildBody(systemPrompt: string, tools: readonly Tool[], history: readonly Message[]): Record<string, JsonValue> {
    const body: Record<string, JsonValue> = { model: this.modelName, messages: convertMessages(systemPrompt, history, this.conversion) };
    // The OpenAI API rejects an empty `tools` array, so no tools means no `tools` key.
    if (tools.length > 0) body['tools'] = tools.map((tool) => toolToOpenAI(tool) as unknown as JsonValue);
    body['stream'] = true;
    body['stream_options'] = { include_usage: true };
    Object.assign(body, generationBody(this.generation));
    const effort = this.reasoningEffort(history);
    if (effort !== undefined) body['reasoning_effort'] = effort;
    Object.assign(body, this.generation.extraBody);
    return body;
  }

  private reasoningEffort(history: readonly Message[]): string | undefined {
    if (this.thinkingEffort === undefined) {
      const thinks = this.conversion.reasoningKey !== undefined && history.some((m) => m.content.some((part) => part.type === 'think'));
      return thinks ? 'medium' : undefined;
    }
    const effort = thinkingEffortToReasoningEffort(this.thinkingEffort);
    return effort === 'none' && this.thinkingOff === 'omit' ? undefined : effort;
  }

  private copyWith(changes: { readonly thinkingEffort?: ThinkingEffort; readonly generation?: GenerationOptions }): OpenAIChatProvider {
    return Object.assign(Object.create(OpenAIChatProvider.prototype) as OpenAIChatProvider, this, changes);
  }
}
