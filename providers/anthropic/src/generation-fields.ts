import type { JsonValue } from '@kosong/core';
import { rejectUnsupportedGenerationOptions, UnsupportedGenerationOptionError, type GenerationOptions } from '@kosong/core/provider-kit';

/** The first API version without sampling parameters (`temperature`, `top_p`, `top_k`): any value is a 400. */
export const API_VERSION_WITHOUT_SAMPLING = '2026-10-21';

/** What decides how generation options go on a request. */
export interface GenerationContext {
  /** The provider's name, for errors. */
  readonly provider: string;
  /** Whether the request thinks (an effort other than `off` is set). */
  readonly thinking: boolean;
  /** Whether the request offers tools. */
  readonly hasTools: boolean;
  /** The `anthropic-version` the request is sent with, when not the SDK's own. */
  readonly apiVersion: string | undefined;
}

/**
 * The request fields of the neutral generation options (`max_tokens` is the caller's):
 *
 * - `temperature` / `topP` → `temperature` / `top_p`, only on an API version before 2026-10-21
 *   (the SDK's own version has no sampling parameters); the temperature at most 1; with thinking on,
 *   no temperature but 1 and a `top_p` of 0.95 to 1 (the API's rules);
 * - `stopSequences` → `stop_sequences` (`[]` sends none);
 * - `toolChoice` → `tool_choice` `{type: 'auto' | 'none' | 'any'}` or `{type: 'tool', name}`;
 *   `parallelToolCalls: false` → `disable_parallel_tool_use: true` on it; with thinking on only
 *   `auto` and `none` (the API refuses forced tool use while thinking); without tools no `tool_choice`
 *   at all (the API refuses one there, and it would mean nothing);
 * - `seed`: the API has none.
 *
 * @throws {UnsupportedGenerationOptionError} naming the option, for what the API cannot do.
 */
export function generationFields(options: GenerationOptions, context: GenerationContext): Record<string, JsonValue> {
  const { provider, thinking } = context;
  const unsupported = (option: string, reason: string): UnsupportedGenerationOptionError => new UnsupportedGenerationOptionError(provider, option, reason);
  rejectUnsupportedGenerationOptions(provider, options, ['seed']);
  const fields: Record<string, JsonValue> = {};
  const sampling = context.apiVersion !== undefined && context.apiVersion < API_VERSION_WITHOUT_SAMPLING;
  const { temperature, topP } = options;
  if (temperature !== undefined) {
    if (!sampling) throw unsupported('temperature', noSampling(context.apiVersion));
    if (temperature > 1) throw unsupported('temperature', `the Anthropic API takes 0 to 1, got ${temperature}`);
    if (thinking && temperature !== 1) throw unsupported('temperature', `with thinking on, the API takes no temperature but 1 (got ${temperature})`);
    fields['temperature'] = temperature;
  }
  if (topP !== undefined) {
    if (!sampling) throw unsupported('topP', noSampling(context.apiVersion));
    if (thinking && topP < 0.95) throw unsupported('topP', `with thinking on, the API takes a top_p of 0.95 to 1 (got ${topP})`);
    fields['top_p'] = topP;
  }
  if (options.stopSequences !== undefined && options.stopSequences.length > 0) fields['stop_sequences'] = [...options.stopSequences];

  const { toolChoice, parallelToolCalls } = options;
  if (!context.hasTools || (toolChoice === undefined && parallelToolCalls !== false)) return fields;
  if (thinking && (toolChoice === 'required' || typeof toolChoice === 'object')) {
    throw unsupported('toolChoice', `with thinking on, the API allows only "auto" or "none" (got ${JSON.stringify(toolChoice)})`);
  }
  if (toolChoice === 'none') {
    fields['tool_choice'] = { type: 'none' };
    return fields;
  }
  const choice: Record<string, JsonValue> =
    toolChoice === 'required' ? { type: 'any' } : typeof toolChoice === 'object' ? { type: 'tool', name: toolChoice.name } : { type: 'auto' };
  if (parallelToolCalls === false) choice['disable_parallel_tool_use'] = true;
  fields['tool_choice'] = choice;
  return fields;
}

function noSampling(apiVersion: string | undefined): string {
  const version = apiVersion ?? `the SDK's ${API_VERSION_WITHOUT_SAMPLING}`;
  return `API version ${version} has no sampling parameters (temperature, top_p); set the provider's \`apiVersion: '2023-06-01'\` to send them`;
}
