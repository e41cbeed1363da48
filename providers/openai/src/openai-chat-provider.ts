import type { JsonValue, Message, Tool } from '@kosong/core';
import { UnsupportedGenerationOptionError, type GenerationOptions, type OutputFormat, type ProviderGenerateOptions, type StreamedMessage } from '@kosong/core/provider-kit';

import { ChatCompletionsConnection, type ConnectionOptions } from './chat-completions-connection.js';
import { ChunkConverter } from './chunk-converter.js';
import {
  generationBody,
  layNeutralOptions,
  mergeGenerationOptions,
  type ChatCompletionsGenerationOptions,
  type MaxOutputTokensField,
} from './generation-options.js';
import { OpenAIFamilyProvider } from './openai-family-provider.js';
import { thinkingEffortToReasoningEffort } from './reasoning-effort.js';
import { convertMessages, type MessageConversion } from './request-messages.js';
import { toolToOpenAI } from './request-tools.js';
import { responseFormat } from './structured-output.js';

/** The OpenAI API's base URL, the default of {@link OpenAIChatProvider}. */
export const OPENAI_BASE_URL = 'https://api.openai.com/v1';

/** The most stop sequences the Chat Completions API takes. */
const MAX_STOP_SEQUENCES = 4;

/** Options of an {@link OpenAIChatProvider}. */
export interface OpenAIChatProviderOptions extends ConnectionOptions {
  /** The model, e.g. `gpt-4.1`. */
  readonly model: string;
  /**
   * Sampling and length options sent with every request, in the Chat Completions' own terms. The
   * provider-neutral options (`withGeneration`, per-call `generation`) replace the fields they map to.
   */
  readonly generation?: ChatCompletionsGenerationOptions;
  /**
   * The field that carries the neutral `maxOutputTokens`: `max_completion_tokens` (default; the
   * OpenAI API's, the only one its reasoning models take) or `max_tokens` (compatible servers that
   * know no other, e.g. older vLLM or Ollama).
   */
  readonly maxOutputTokensField?: MaxOutputTokensField;
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
 * Every neutral generation option is honoured: `maxOutputTokens` as `max_completion_tokens` (or
 * `max_tokens`, see `maxOutputTokensField`), `temperature`, `top_p`, `stop` (at most 4 sequences:
 * more is an `UnsupportedGenerationOptionError`), `seed`, `tool_choice`, `parallel_tool_calls`.
 * A neutral option wins over the provider's own option for the same field; `extraBody` wins over
 * both. Without tools, a neutral `parallelToolCalls` or `toolChoice` of `auto`/`none` sends no field
 * (the API refuses them there; they mean nothing without tools).
 *
 * @example
 * const provider = new OpenAIChatProvider({ apiKey, model: 'gpt-4.1', generation: { temperature: 0.2 } });
 * const result = await step({ provider: provider.withThinking('high'), systemPrompt, toolset, history });
 */
export class OpenAIChatProvider extends OpenAIFamilyProvider<ChatCompletionsGenerationOptions> {
  readonly name = 'openai';
  readonly modelName: string;
  private readonly maxOutputTokensField: MaxOutputTokensField;
  private readonly conversion: MessageConversion;
  private readonly thinkingOff: 'omit' | 'none';

  /** @throws {ChatProviderError} when there is neither an API key nor a client. */
  constructor(options: OpenAIChatProviderOptions) {
    super(new ChatCompletionsConnection(options, { provider: 'OpenAIChatProvider', baseURL: OPENAI_BASE_URL }), options.generation ?? {});
    this.modelName = options.model;
    this.maxOutputTokensField = options.maxOutputTokensField ?? 'max_completion_tokens';
    this.conversion = {
      systemRole: options.systemRole ?? 'system',
      reasoningKey: options.reasoningKey,
      toolMessageContent: options.toolMessageContent ?? 'parts',
      media: options.unsupportedMedia === 'passthrough' ? 'passthrough' : 'openai',
    };
    this.thinkingOff = options.thinkingOff ?? 'omit';
  }

  /**
   * Streams one response. The request is sent before this resolves; the stream's `traceId` is the
   * `x-trace-id` response header, if any.
   *
   * @throws {ChatProviderError} (or a subclass) when the history cannot be converted or the request
   * fails; an `InvalidGenerationOptionError` / `UnsupportedGenerationOptionError` for generation
   * options it cannot send (before any request); the signal's reason when it aborts.
   */
  async generate(systemPrompt: string, tools: readonly Tool[], history: readonly Message[], options: ProviderGenerateOptions = {}): Promise<StreamedMessage> {
    const generation = this.generationFor(tools, options);
    if (generation.stopSequences !== undefined && generation.stopSequences.length > MAX_STOP_SEQUENCES) {
      throw new UnsupportedGenerationOptionError(this.name, 'stopSequences', `at most ${MAX_STOP_SEQUENCES} sequences, got ${generation.stopSequences.length}`);
    }
    const body = this.buildBody(systemPrompt, tools, history, generation, options.output);
    const converter = new ChunkConverter({ reasoningKey: this.conversion.reasoningKey, keepEmptyReasoning: false });
    return this.connection.open(body, options.signal, converter);
  }

  /** A copy whose own (Chat Completions) options are these merged over the current ones (`extraBody` key by key). */
  withGenerationOptions(options: ChatCompletionsGenerationOptions): OpenAIChatProvider {
    return this.copyWith({ own: mergeGenerationOptions(this.own, options) });
  }

  private buildBody(
    systemPrompt: string,
    tools: readonly Tool[],
    history: readonly Message[],
    generation: GenerationOptions,
    output: OutputFormat | undefined,
  ): Record<string, JsonValue> {
    const body: Record<string, JsonValue> = { model: this.modelName, messages: convertMessages(systemPrompt, history, this.conversion) };
    // The OpenAI API rejects an empty `tools` array, so no tools means no `tools` key.
    if (tools.length > 0) body['tools'] = tools.map((tool) => toolToOpenAI(tool) as unknown as JsonValue);
    body['stream'] = true;
    body['stream_options'] = { include_usage: true };
    const layout = { maxTokensField: this.maxOutputTokensField, hasTools: tools.length > 0 };
    Object.assign(body, generationBody(layNeutralOptions(this.own, generation, layout)));
    const effort = this.reasoningEffort(history);
    if (effort !== undefined) body['reasoning_effort'] = effort;
    if (output !== undefined) body['response_format'] = responseFormat(output);
    Object.assign(body, this.own.extraBody);
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
}
