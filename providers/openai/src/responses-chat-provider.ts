import type { JsonValue, Message, Tool } from '@kosong/core';
import type { GenerationOptions, OutputFormat, ProviderGenerateOptions, StreamedMessage } from '@kosong/core/provider-kit';

import { ChatCompletionsConnection, type ConnectionOptions } from './chat-completions-connection.js';
import { OPENAI_BASE_URL } from './openai-chat-provider.js';
import { OpenAIFamilyProvider } from './openai-family-provider.js';
import { thinkingEffortToReasoningEffort } from './reasoning-effort.js';
import { RESPONSES_ENDPOINT } from './responses-endpoint.js';
import { ResponsesEventConverter } from './responses-event-converter.js';
import { mergeResponsesGenerationOptions, responsesGenerationBody, type ResponsesGenerationOptions } from './responses-generation.js';
import { convertInput, type ResponsesInputConversion } from './responses-input.js';
import { systemRoleFor } from './responses-system-role.js';
import { toolToResponses } from './responses-tools.js';
import { responsesTextFormat } from './structured-output.js';

/** Options of an {@link OpenAIResponsesChatProvider}. */
export interface OpenAIResponsesChatProviderOptions extends ConnectionOptions {
  /** The model, e.g. `gpt-5.1`. */
  readonly model: string;
  /**
   * Generation options sent with every request, in the Responses API's own terms. The
   * provider-neutral options (`withGeneration`, per-call `generation`) replace the fields they map to.
   */
  readonly generation?: ResponsesGenerationOptions;
  /**
   * The role of the system prompt (and of `system` messages): default `developer` for OpenAI's own
   * models (`gpt-…`, `o1`…`o4…`, `chatgpt-…`, `codex-…`, `computer-use-…`), else `system`.
   */
  readonly systemRole?: 'system' | 'developer';
  /** The `strict` flag of every function tool (default `false`, as the Python original sends). */
  readonly strictTools?: boolean;
  /**
   * The `output` of tool results: `parts` (default; `input_text`, `input_image` and `input_file`
   * items) or `text` (the text parts joined with newlines).
   */
  readonly toolMessageContent?: 'parts' | 'text';
  /**
   * What `withThinking('off')` sends: `omit` (default) sends no `reasoning` (models without reasoning
   * reject it), `none` sends `reasoning: {effort: "none"}` (GPT-5.1 and later reason by default).
   */
  readonly thinkingOff?: 'omit' | 'none';
}

/**
 * A chat provider for the OpenAI Responses API (`name` = `openai-responses`), on the official
 * `openai` SDK's `responses.create`. Streams; immutable (the `with…` methods return copies that
 * share the HTTP client).
 *
 * Requests follow kosong spec §7.4: `store: false` (nothing is kept on OpenAI's side, so the whole
 * history is sent each time); function tools; with a thinking effort, `reasoning: {effort, summary:
 * "auto"}` and `include: ["reasoning.encrypted_content"]`, so that reasoning streams as think parts
 * whose encrypted content goes back with the history (see `convertInput`). The message id is the
 * response id.
 *
 * Neutral generation options: `maxOutputTokens` (`max_output_tokens`), `temperature`, `topP`,
 * `toolChoice`, `parallelToolCalls`; the API has no stop sequences and no seed, so those are an
 * `UnsupportedGenerationOptionError`. Failures map to the `ChatProviderError` family as for the
 * Chat Completions provider; a `response.failed` or `error` event mid-stream is an error too (a
 * rate limit or server error there is an `APIStatusError` 429 or 500, retried by the agent loop).
 *
 * @example
 * const provider = new OpenAIResponsesChatProvider({ apiKey, model: 'gpt-5.1' }).withThinking('medium');
 * const result = await step({ provider, systemPrompt, toolset, history });
 */
export class OpenAIResponsesChatProvider extends OpenAIFamilyProvider<ResponsesGenerationOptions> {
  readonly name = 'openai-responses';
  readonly modelName: string;
  private readonly conversion: ResponsesInputConversion;
  private readonly strictTools: boolean;
  private readonly thinkingOff: 'omit' | 'none';

  /** @throws {ChatProviderError} when there is neither an API key nor a client. */
  constructor(options: OpenAIResponsesChatProviderOptions) {
    super(new ChatCompletionsConnection(options, { provider: 'OpenAIResponsesChatProvider', baseURL: OPENAI_BASE_URL }), options.generation ?? {});
    this.modelName = options.model;
    this.conversion = {
      systemRole: options.systemRole ?? systemRoleFor(options.model),
      toolMessageContent: options.toolMessageContent ?? 'parts',
    };
    this.strictTools = options.strictTools ?? false;
    this.thinkingOff = options.thinkingOff ?? 'omit';
  }

  /**
   * Streams one response. The request is sent before this resolves.
   *
   * @throws {ChatProviderError} (or a subclass) when the history cannot be converted or the request
   * fails; an `InvalidGenerationOptionError` / `UnsupportedGenerationOptionError` for generation
   * options it cannot send (before any request); the signal's reason when it aborts.
   */
  async generate(systemPrompt: string, tools: readonly Tool[], history: readonly Message[], options: ProviderGenerateOptions = {}): Promise<StreamedMessage> {
    const generation = this.generationFor(tools, options);
    const body = this.buildBody(systemPrompt, tools, history, generation, options.output);
    return this.connection.open(body, options.signal, new ResponsesEventConverter(), RESPONSES_ENDPOINT);
  }

  /** A copy whose own (Responses) options are these merged over the current ones (`extraBody` key by key). */
  withGenerationOptions(options: ResponsesGenerationOptions): OpenAIResponsesChatProvider {
    return this.copyWith({ own: mergeResponsesGenerationOptions(this.own, options) });
  }

  private buildBody(
    systemPrompt: string,
    tools: readonly Tool[],
    history: readonly Message[],
    generation: GenerationOptions,
    output: OutputFormat | undefined,
  ): Record<string, JsonValue> {
    const body: Record<string, JsonValue> = {
      stream: true,
      model: this.modelName,
      input: convertInput(systemPrompt, history, this.conversion),
      tools: tools.map((tool) => toolToResponses(tool, this.strictTools) as unknown as JsonValue),
      store: false,
    };
    Object.assign(body, responsesGenerationBody(this.name, this.own, generation, tools.length > 0));
    const effort = this.thinkingEffort === undefined ? undefined : thinkingEffortToReasoningEffort(this.thinkingEffort);
    if (effort === 'none') {
      if (this.thinkingOff === 'none') body['reasoning'] = { effort: 'none' };
    } else if (effort !== undefined) {
      body['reasoning'] = { effort, summary: 'auto' };
      body['include'] = ['reasoning.encrypted_content'];
    }
    if (output !== undefined) body['text'] = { format: responsesTextFormat(output) };
    Object.assign(body, this.own.extraBody);
    return body;
  }
}
