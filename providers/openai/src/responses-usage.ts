import { tokenUsage, type TokenUsage } from '@kosong/core';

/**
 * The usage of a final Responses API response (`response.usage`), if it has one: cached input tokens
 * (`input_tokens_details.cached_tokens`) are `inputCacheRead`, tokens written to the cache
 * (`input_tokens_details.cache_write_tokens`) `inputCacheCreation`, and both are taken out of
 * `inputOther`; `output_tokens` (reasoning included) is `output`.
 */
export function usageFromResponse(usage: unknown): TokenUsage | undefined {
  if (!isRecord(usage)) return undefined;
  const details = isRecord(usage['input_tokens_details']) ? usage['input_tokens_details'] : {};
  const cached = count(details['cached_tokens']);
  const written = count(details['cache_write_tokens']);
  return tokenUsage({
    inputOther: Math.max(0, count(usage['input_tokens']) - cached - written),
    output: count(usage['output_tokens']),
    inputCacheRead: cached,
    inputCacheCreation: written,
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
}
