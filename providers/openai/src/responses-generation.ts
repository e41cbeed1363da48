import type { JsonValue } from '@kosong/core';
import { rejectUnsupportedGenerationOptions, type GenerationOptionName, type GenerationOptions as NeutralGenerationOptions } from '@kosong/core/provider-kit';

/**
 * Generation options of a Responses request in the API's own terms, sent as their snake_case
 * fields. Anything else goes in `extraBody`.
 *
 * The provider-neutral options of `@kosong/core` (`withGeneration`, per-call `generation`) are laid
 * over these: a neutral option replaces the field it maps to; `extraBody` is merged last and wins
 * over both.
 */
export interface ResponsesGenerationOptions {
  /** Cap on generated tokens, reasoning included (`max_output_tokens`); `null`: no cap. */
  readonly maxOutputTokens?: number | null;
  /** Cap on the built-in tool calls of one response (`max_tool_calls`). */
  readonly maxToolCalls?: number;
  readonly temperature?: number;
  readonly topP?: number;
  /** Whether the model may call several tools at once (`parallel_tool_calls`). */
  readonly parallelToolCalls?: boolean;
  /** `tool_choice`: `auto`, `none`, `required`, or one named function. */
  readonly toolChoice?: 'auto' | 'none' | 'required' | { readonly type: 'function'; readonly name: string };
  /** A key for the provider's prompt cache (`prompt_cache_key`). */
  readonly promptCacheKey?: string;
  /** A stable id of the end user, for abuse detection (`safety_identifier`). */
  readonly safetyIdentifier?: string;
  /** Fields merged into the top level of the request body last, e.g. `{ service_tier: 'flex' }`. */
  readonly extraBody?: { readonly [key: string]: JsonValue };
}

/** The neutral options the Responses API has no field for. */
const UNSUPPORTED: readonly GenerationOptionName[] = ['stopSequences', 'seed'];

/** `{...base, ...update}`, with `extraBody` merged key by key. */
export function mergeResponsesGenerationOptions(base: ResponsesGenerationOptions, update: ResponsesGenerationOptions): ResponsesGenerationOptions {
  const merged = { ...base, ...update };
  if (base.extraBody !== undefined && update.extraBody !== undefined) return { ...merged, extraBody: { ...base.extraBody, ...update.extraBody } };
  return merged;
}

/**
 * The generation fields of a Responses request body: the provider's own options with the neutral
 * ones laid over them (without `extraBody`, which the caller merges last).
 *
 * - `maxOutputTokens` → `max_output_tokens`, `temperature`, `topP` → `top_p`;
 * - `toolChoice` → `tool_choice` (a named tool as `{type: 'function', name}`), `parallelToolCalls`
 *   → `parallel_tool_calls`; without tools, neither `parallel_tool_calls` nor a `tool_choice` of
 *   `auto` / `none` is sent (they mean nothing there);
 * - `stopSequences` and `seed`: the API has neither, so setting one is an
 *   `UnsupportedGenerationOptionError` (`stopSequences: []`, which asks for none, is fine).
 *
 * @throws {UnsupportedGenerationOptionError} for `stopSequences` (non-empty) or `seed`, naming `provider`.
 */
export function responsesGenerationBody(
  provider: string,
  own: ResponsesGenerationOptions,
  neutral: NeutralGenerationOptions,
  hasTools: boolean,
): Record<string, JsonValue> {
  // `stopSequences: []` asks for no stop sequence, which needs no field
  rejectUnsupportedGenerationOptions(provider, neutral, neutral.stopSequences?.length === 0 ? ['seed'] : UNSUPPORTED);
  const body: Record<string, JsonValue> = {};
  const maxOutputTokens = neutral.maxOutputTokens ?? own.maxOutputTokens;
  if (maxOutputTokens !== undefined && maxOutputTokens !== null) body['max_output_tokens'] = maxOutputTokens;
  if (own.maxToolCalls !== undefined) body['max_tool_calls'] = own.maxToolCalls;
  const temperature = neutral.temperature ?? own.temperature;
  if (temperature !== undefined) body['temperature'] = temperature;
  const topP = neutral.topP ?? own.topP;
  if (topP !== undefined) body['top_p'] = topP;
  const parallel = neutral.parallelToolCalls ?? own.parallelToolCalls;
  if (parallel !== undefined && hasTools) body['parallel_tool_calls'] = parallel;
  const choice = neutralToolChoice(neutral) ?? own.toolChoice;
  if (choice !== undefined && (hasTools || (choice !== 'auto' && choice !== 'none'))) {
    body['tool_choice'] = typeof choice === 'string' ? choice : { type: 'function', name: choice.name };
  }
  if (own.promptCacheKey !== undefined) body['prompt_cache_key'] = own.promptCacheKey;
  if (own.safetyIdentifier !== undefined) body['safety_identifier'] = own.safetyIdentifier;
  return body;
}

function neutralToolChoice(neutral: NeutralGenerationOptions): ResponsesGenerationOptions['toolChoice'] {
  const choice = neutral.toolChoice;
  if (choice === undefined || typeof choice === 'string') return choice;
  return { type: 'function', name: choice.name };
}
