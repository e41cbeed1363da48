import { tokenUsage, type TokenUsage } from '@kosong/core';

/**
 * The usage a stream chunk reports, if any: the standard top-level `chunk.usage` (sent in a last
 * chunk when `stream_options.include_usage` is set), else `choices[0].usage` where Moonshot puts it.
 *
 * Cached prompt tokens come from Moonshot's top-level `usage.cached_tokens` when that field exists,
 * else from `usage.prompt_tokens_details.cached_tokens`; they count as `inputCacheRead` and are
 * taken out of `inputOther`.
 */
export function usageFromChunk(chunk: { readonly usage?: unknown; readonly choices?: unknown }): TokenUsage | undefined {
  let usage = asObject(chunk.usage);
  if (usage === undefined && Array.isArray(chunk.choices)) usage = asObject(asObject(chunk.choices[0])?.['usage']);
  if (usage === undefined) return undefined;
  const prompt = count(usage['prompt_tokens']);
  const cached = 'cached_tokens' in usage ? count(usage['cached_tokens']) : count(asObject(usage['prompt_tokens_details'])?.['cached_tokens']);
  return tokenUsage({ inputOther: Math.max(0, prompt - cached), output: count(usage['completion_tokens']), inputCacheRead: cached });
}

function asObject(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
}
