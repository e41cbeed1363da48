import type { GenerationOptions as NeutralGenerationOptions, JsonValue } from '@kosong/core';

/**
 * Sampling and length options of a Chat Completions request, sent as their snake_case fields.
 * Anything else goes in `extraBody`.
 *
 * These are the providers' own options. The provider-neutral ones of `@kosong/core`
 * (`withGeneration`, per-call `generation`) are laid over them: a neutral option replaces the field
 * it maps to (see {@link layNeutralOptions}); `extraBody` is merged last and wins over both.
 */
export interface ChatCompletionsGenerationOptions {
  /**
   * Cap on generated tokens, reasoning included (`max_completion_tokens`). `null`: no cap (for Kimi,
   * a `null` set together with `maxTokens` wins over it).
   */
  readonly maxCompletionTokens?: number | null;
  /**
   * The older `max_tokens`. The OpenAI provider sends it as it is (for servers that know no other);
   * Kimi treats it as an alias of `maxCompletionTokens` (spec §7.2).
   */
  readonly maxTokens?: number | null;
  readonly temperature?: number;
  readonly topP?: number;
  readonly presencePenalty?: number;
  readonly frequencyPenalty?: number;
  /** Up to four sequences where the model stops. */
  readonly stop?: string | readonly string[];
  readonly seed?: number;
  /** A key for the provider's prompt cache (`prompt_cache_key`). */
  readonly promptCacheKey?: string;
  /** Whether the model may call several tools at once (`parallel_tool_calls`). */
  readonly parallelToolCalls?: boolean;
  /** `tool_choice`: `auto`, `none`, `required`, or one named function. */
  readonly toolChoice?: 'auto' | 'none' | 'required' | { readonly type: 'function'; readonly function: { readonly name: string } };
  /**
   * Fields merged into the top level of the request body last (so they override everything else),
   * e.g. `{ thinking: { type: 'enabled' } }` for Kimi.
   */
  readonly extraBody?: { readonly [key: string]: JsonValue };
}

/**
 * Options merged: later fields win; `extraBody` is merged key by key, and its `thinking` object
 * field by field (kosong spec §7.2 `with_extra_body`).
 */
export function mergeGenerationOptions(base: ChatCompletionsGenerationOptions, update: ChatCompletionsGenerationOptions): ChatCompletionsGenerationOptions {
  const merged = { ...base, ...update };
  if (base.extraBody !== undefined && update.extraBody !== undefined) {
    return { ...merged, extraBody: mergeExtraBody(base.extraBody, update.extraBody) };
  }
  return merged;
}

/** `{...base, ...update}`, except that two `thinking` objects are merged field by field. */
export function mergeExtraBody(
  base: { readonly [key: string]: JsonValue },
  update: { readonly [key: string]: JsonValue },
): { readonly [key: string]: JsonValue } {
  const merged = { ...base, ...update };
  const before = base['thinking'];
  const after = update['thinking'];
  if (isObject(before) && isObject(after)) merged['thinking'] = { ...before, ...after };
  return merged;
}

/**
 * Kimi's reading of `maxTokens` (kosong spec §7.2): an alias that fills `maxCompletionTokens` unless
 * the same options set that too (even to `null`); `maxTokens` itself is dropped.
 */
export function aliasMaxTokens(options: ChatCompletionsGenerationOptions): ChatCompletionsGenerationOptions {
  if (!('maxTokens' in options)) return options;
  const { maxTokens, ...rest } = options;
  if ('maxCompletionTokens' in rest || maxTokens === undefined) return rest;
  return { ...rest, maxCompletionTokens: maxTokens };
}

/** The request-body fields of the options, without `extraBody`. A `null` cap is not sent. */
export function generationBody(options: ChatCompletionsGenerationOptions): Record<string, JsonValue> {
  const body: Record<string, JsonValue> = {};
  if (options.maxCompletionTokens !== undefined && options.maxCompletionTokens !== null) body['max_completion_tokens'] = options.maxCompletionTokens;
  if (options.maxTokens !== undefined && options.maxTokens !== null) body['max_tokens'] = options.maxTokens;
  if (options.temperature !== undefined) body['temperature'] = options.temperature;
  if (options.topP !== undefined) body['top_p'] = options.topP;
  if (options.presencePenalty !== undefined) body['presence_penalty'] = options.presencePenalty;
  if (options.frequencyPenalty !== undefined) body['frequency_penalty'] = options.frequencyPenalty;
  if (options.stop !== undefined) body['stop'] = typeof options.stop === 'string' ? options.stop : [...options.stop];
  if (options.seed !== undefined) body['seed'] = options.seed;
  if (options.promptCacheKey !== undefined) body['prompt_cache_key'] = options.promptCacheKey;
  if (options.parallelToolCalls !== undefined) body['parallel_tool_calls'] = options.parallelToolCalls;
  if (options.toolChoice !== undefined) {
    body['tool_choice'] = typeof options.toolChoice === 'string' ? options.toolChoice : { type: 'function', function: { name: options.toolChoice.function.name } };
  }
  return body;
}

/** Which field carries a neutral `maxOutputTokens`. */
export type MaxOutputTokensField = 'max_completion_tokens' | 'max_tokens';

/** How {@link layNeutralOptions} lays neutral options over a provider's own. */
export interface NeutralLayout {
  /** Which field carries `maxOutputTokens`. */
  readonly maxTokensField: MaxOutputTokensField;
  /**
   * Whether the request has tools. Without tools, a neutral `parallelToolCalls`, or a neutral
   * `toolChoice` of `auto` or `none`, removes the field instead (they mean nothing there, and the
   * OpenAI API refuses them without tools). `required` or a named tool needs tools: core refuses it
   * before the provider is called.
   */
  readonly hasTools: boolean;
}

/**
 * The provider's own options with the neutral ones laid over them. A neutral option replaces the
 * field it maps to: `maxOutputTokens` both token caps (and sets the one named by `maxTokensField`),
 * `stopSequences` `stop` (`[]` removes it), `toolChoice` `toolChoice` (a named tool as a named
 * function), and `temperature`, `topP`, `seed`, `parallelToolCalls` their namesakes.
 * `extraBody` is left alone (it is merged last, over everything).
 */
export function layNeutralOptions(
  own: ChatCompletionsGenerationOptions,
  neutral: NeutralGenerationOptions,
  layout: NeutralLayout,
): ChatCompletionsGenerationOptions {
  const result: { -readonly [K in keyof ChatCompletionsGenerationOptions]: ChatCompletionsGenerationOptions[K] } = { ...own };
  const { maxOutputTokens, temperature, topP, stopSequences, seed, toolChoice, parallelToolCalls } = neutral;
  if (maxOutputTokens !== undefined) {
    delete result.maxCompletionTokens;
    delete result.maxTokens;
    if (layout.maxTokensField === 'max_tokens') result.maxTokens = maxOutputTokens;
    else result.maxCompletionTokens = maxOutputTokens;
  }
  if (temperature !== undefined) result.temperature = temperature;
  if (topP !== undefined) result.topP = topP;
  if (stopSequences !== undefined) {
    if (stopSequences.length === 0) delete result.stop;
    else result.stop = stopSequences;
  }
  if (seed !== undefined) result.seed = seed;
  if (parallelToolCalls !== undefined) {
    if (layout.hasTools) result.parallelToolCalls = parallelToolCalls;
    else delete result.parallelToolCalls;
  }
  if (toolChoice !== undefined) {
    if (!layout.hasTools && (toolChoice === 'auto' || toolChoice === 'none')) delete result.toolChoice;
    else result.toolChoice = typeof toolChoice === 'string' ? toolChoice : { type: 'function', function: { name: toolChoice.name } };
  }
  return result;
}

/** @deprecated Renamed {@link ChatCompletionsGenerationOptions} (`GenerationOptions` is now the neutral type of `@kosong/core`). */
export type GenerationOptions = ChatCompletionsGenerationOptions;

function isObject(value: JsonValue | undefined): value is { readonly [key: string]: JsonValue } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
