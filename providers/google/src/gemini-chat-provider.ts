import type { Message, Tool } from '@kosong/core';
import { BaseChatProvider, ChatProviderError, type ProviderChanges, type ProviderGenerateOptions, type Secrets, type StreamedMessage, type ThinkingEffort } from '@kosong/core/provider-kit';
import type { GenerateContentConfig } from '@google/genai';

import { GeminiConnection, type GeminiConnectionOptions } from './gemini-connection.js';
import { layGenerationOptions } from './generation-config.js';
import { MediaResolver, type MediaOptions } from './media-resolver.js';
import { layOutputFormat } from './output-config.js';
import { convertHistory } from './request-contents.js';
import { toolsToGemini } from './request-tools.js';
import { ResponseConverter } from './response-converter.js';
import { thinkingConfigFor, thinkingEffortOf, type ThinkingConfig } from './thinking-config.js';

/**
 * Fields of Gemini's `generationConfig` (and of the request around it) sent as they are with every
 * request: `topK`, `safetySettings`, `responseMimeType`, `cachedContent`, `labels`, … The fields the
 * provider sets itself (system instruction, tools, thinking) are not among them.
 */
export type GeminiRequestConfig = Omit<
  GenerateContentConfig,
  'systemInstruction' | 'tools' | 'thinkingConfig' | 'abortSignal' | 'httpOptions' | 'automaticFunctionCalling' | 'automaticContinuation'
>;

/** Options of a {@link GeminiChatProvider}. */
export interface GeminiChatProviderOptions extends GeminiConnectionOptions {
  /** The model, e.g. `gemini-2.5-flash` or `gemini-3-pro-preview`. */
  readonly model: string;
  /** How images and audio given by URL are sent. */
  readonly media?: MediaOptions;
  /**
   * Request fields sent as they are (see {@link GeminiRequestConfig}). The provider-neutral
   * generation options (`withGeneration`, per-call `generation`) replace the fields they map to.
   */
  readonly config?: GeminiRequestConfig;
}

/**
 * A chat provider for Google Gemini, on the Gemini API or on Vertex AI (`name` = `google_genai`),
 * on the official `@google/genai` SDK. Streams (`streamGenerateContent`), with usage; thinking as
 * think parts; parallel function calls, with their thought signatures kept for the next request.
 * Immutable: the `with…` methods return copies that share the HTTP client.
 *
 * The neutral generation options map to `generationConfig` (`maxOutputTokens`, `temperature`,
 * `topP`, `stopSequences` — at most 5 —, `seed`) and `toolConfig.functionCallingConfig`
 * (`toolChoice`: modes AUTO, NONE, ANY, ANY with `allowedFunctionNames`); `parallelToolCalls: false`
 * is an `UnsupportedGenerationOptionError` (Gemini has no such switch).
 *
 * @example
 * const provider = new GeminiChatProvider({ apiKey, model: 'gemini-2.5-flash' }).withThinking('medium');
 * const result = await step({ provider, systemPrompt, toolset, history });
 */
export class GeminiChatProvider extends BaseChatProvider {
  readonly name = 'google_genai';
  readonly modelName: string;
  private readonly connection: GeminiConnection;
  private readonly media: MediaOptions;
  private readonly config: GeminiRequestConfig;
  private readonly thinkingConfig: ThinkingConfig | undefined = undefined;

  /** @throws {ChatProviderError} when the options cannot reach Gemini (no API key, say). */
  constructor(options: GeminiChatProviderOptions) {
    super();
    if (typeof options.model !== 'string' || options.model === '') throw new ChatProviderError('GeminiChatProvider needs a `model`');
    this.modelName = options.model;
    this.connection = new GeminiConnection(options);
    this.media = options.media ?? {};
    this.config = options.config ?? {};
  }

  /** Whether requests go to Vertex AI rather than the Gemini API. */
  get vertexAI(): boolean {
    return this.connection.vertexAI;
  }

  /**
   * Streams one response. Media given by `http(s)` URL are downloaded first (with the signal); the
   * request is sent before this resolves.
   *
   * @throws {ChatProviderError} (or a subclass) when the history cannot be converted or the request
   * fails; an `InvalidGenerationOptionError` / `UnsupportedGenerationOptionError` for generation
   * options it cannot send (before anything is sent); the signal's reason when it aborts.
   */
  async generate(systemPrompt: string, tools: readonly Tool[], history: readonly Message[], options: ProviderGenerateOptions = {}): Promise<StreamedMessage> {
    const { signal } = options;
    signal?.throwIfAborted();
    const generation = this.generationFor(tools, options);
    const own = layOutputFormat(layGenerationOptions(this.name, this.config, generation, tools.length > 0), options.output);
    const media = new MediaResolver(this.media, this.connection.fetch, signal);
    let contents;
    try {
      contents = await convertHistory(history, this.modelName, media);
    } finally {
      media.close();
    }
    if (contents.length === 0) throw new ChatProviderError('GeminiChatProvider: the history has nothing to send (no message with content)');
    // Always sent, even empty (kosong spec §7.6).
    const config: GenerateContentConfig = { ...own, systemInstruction: { role: 'user', parts: [{ text: systemPrompt }] } };
    const declarations = toolsToGemini(tools);
    if (declarations !== undefined) config.tools = declarations;
    if (this.thinkingConfig !== undefined) config.thinkingConfig = { ...this.thinkingConfig } as NonNullable<GenerateContentConfig['thinkingConfig']>;
    return this.connection.open({ model: this.modelName, contents, config }, signal, new ResponseConverter());
  }

  /**
   * `withThinking` asks for this thinking effort (kosong spec §7.6): a `thinkingLevel` for gemini-3
   * models (`low` → LOW, higher → HIGH, `off` → none: they always think), a `thinkingBudget` for
   * older ones (`off` → 0, `low` → 1024, `medium` → 4096, higher → 32000). Thoughts are included
   * (as think parts) unless the budget is 0. `thinkingEffort` is the effort the request asks for
   * (the spec's reading of its thinking config).
   */
  protected override thinkingChanges(effort: ThinkingEffort): ProviderChanges {
    const thinkingConfig = thinkingConfigFor(this.modelName, effort);
    return { thinkingConfig, thinkingEffort: thinkingEffortOf(thinkingConfig) };
  }

  protected override describe(): Record<string, unknown> {
    return { vertexAI: this.vertexAI };
  }

  protected override secrets(): Secrets {
    return this.connection.secrets;
  }
}
