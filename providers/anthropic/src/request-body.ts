import type { GenerationOptions, JsonValue, Message, ThinkingEffort, Tool } from '@kosong/core';
import type { OutputFormat } from '@kosong/core/provider-kit';

import { cacheControl, markLastMessage, withCacheControl, type CacheTTL } from './cache-control.js';
import { generationFields } from './generation-fields.js';
import { outputConfigFormat } from './output-format.js';
import { convertMessages, type MessageConversion, type RequestBlock } from './request-messages.js';
import { INTERLEAVED_THINKING_BETA, supportsAdaptiveThinking, thinkingRequest } from './thinking.js';

/** Everything a request is built from, besides the conversation. */
export interface RequestSettings extends MessageConversion {
  /** The provider's name, for errors. */
  readonly provider: string;
  readonly model: string;
  /** `max_tokens` unless the generation options set `maxOutputTokens`: the cap on output tokens, thinking included. */
  readonly maxTokens: number;
  /** The prompt cache's TTL, or `false` for no cache breakpoints. */
  readonly promptCache: CacheTTL | false;
  /** The effort set with `withThinking` (clamped), if any. */
  readonly thinkingEffort: ThinkingEffort | undefined;
  /** The request's `metadata` (e.g. `{user_id}`). */
  readonly metadata: { readonly [key: string]: JsonValue } | undefined;
  /** Beta flags sent in `anthropic-beta` besides the ones the provider adds. */
  readonly betas: readonly string[];
  /** The `anthropic-version` header, when not the SDK's own. */
  readonly apiVersion: string | undefined;
}

/** A request: its JSON body and the headers that go with it. */
export interface MessagesRequest {
  readonly body: Record<string, JsonValue>;
  readonly headers: Record<string, string>;
}

/**
 * A streamed Messages API request (kosong spec §7.5): `model`, `max_tokens`, `messages`, `system`
 * (a text block, left out when the prompt is empty), `tools` (`{name, description, input_schema}`),
 * `stream: true`, then `metadata`, `thinking`, `output_config` (the effort, and the structured
 * output's `format`) and the fields of the generation options (see `generationFields`) when set.
 *
 * Prompt caching puts breakpoints on the system block, the last tool and the last block of the
 * last message. The `anthropic-beta` header names interleaved thinking for models before adaptive
 * thinking, and the extra betas.
 *
 * @throws {ChatProviderError} when the history cannot be converted (see `convertMessages`); an
 * `UnsupportedGenerationOptionError` for a generation option the API cannot take; an
 * `UnsupportedOutputError` for a structured output schema it cannot take (see `outputConfigFormat`).
 */
export function buildRequest(
  systemPrompt: string,
  tools: readonly Tool[],
  history: readonly Message[],
  settings: RequestSettings,
  generation: GenerationOptions,
  output?: OutputFormat,
): MessagesRequest {
  const thinking = settings.thinkingEffort !== undefined && settings.thinkingEffort !== 'off';
  const sampling = generationFields(generation, { provider: settings.provider, thinking, hasTools: tools.length > 0, apiVersion: settings.apiVersion });
  const control = settings.promptCache === false ? undefined : cacheControl(settings.promptCache);
  const messages = convertMessages(history, settings);
  if (control !== undefined) markLastMessage(messages, control);

  const maxTokens = generation.maxOutputTokens ?? settings.maxTokens;
  const body: Record<string, JsonValue> = { model: settings.model, max_tokens: maxTokens, messages: messages as unknown as JsonValue };
  if (systemPrompt !== '') {
    const system: RequestBlock = { type: 'text', text: systemPrompt };
    body['system'] = [control === undefined ? system : withCacheControl(system, control)];
  }
  body['tools'] = tools.map((tool, index) => {
    const definition: RequestBlock = { name: tool.name, description: tool.description, input_schema: tool.parameters as JsonValue };
    return control !== undefined && index === tools.length - 1 ? withCacheControl(definition, control) : definition;
  });
  body['stream'] = true;
  if (settings.metadata !== undefined) body['metadata'] = { ...settings.metadata };
  if (settings.thinkingEffort !== undefined) {
    const { thinking, outputConfig } = thinkingRequest(settings.model, settings.thinkingEffort);
    body['thinking'] = thinking;
    if (outputConfig !== undefined) body['output_config'] = outputConfig;
  }
  Object.assign(body, sampling);
  if (output !== undefined) {
    const config = body['output_config'];
    const format = outputConfigFormat(settings.provider, output);
    body['output_config'] = typeof config === 'object' && config !== null && !Array.isArray(config) ? { ...config, format } : { format };
  }

  const betas = supportsAdaptiveThinking(settings.model) ? [...settings.betas] : [INTERLEAVED_THINKING_BETA, ...settings.betas];
  const unique = [...new Set(betas)];
  const headers: Record<string, string> = {};
  if (unique.length > 0) headers['anthropic-beta'] = unique.join(',');
  if (settings.apiVersion !== undefined) headers['anthropic-version'] = settings.apiVersion;
  return { body, headers };
}
