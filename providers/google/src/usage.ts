import { tokenUsage, type TokenUsage } from '@kosong/core';

/**
 * The token usage of a Gemini `usageMetadata` (kosong spec §7.6, done better than the original):
 *
 * - `inputCacheRead` = `cachedContentTokenCount` (prompt tokens served from the context cache);
 * - `inputOther` = `promptTokenCount` − cached + `toolUsePromptTokenCount` (the prompt count
 *   includes the cached tokens, so they are not counted twice; tool-use prompt tokens are input too);
 * - `output` = `candidatesTokenCount` + `thoughtsTokenCount` (thinking is billed as output, and
 *   Gemini reports it apart from the candidates).
 *
 * Counts that are missing, negative or not numbers read 0. `undefined` when there is no metadata.
 */
export function usageFromMetadata(metadata: unknown): TokenUsage | undefined {
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) return undefined;
  const fields = metadata as Record<string, unknown>;
  const prompt = count(fields['promptTokenCount']);
  const cached = Math.min(count(fields['cachedContentTokenCount']), prompt);
  return tokenUsage({
    inputOther: prompt - cached + count(fields['toolUsePromptTokenCount']),
    inputCacheRead: cached,
    output: count(fields['candidatesTokenCount']) + count(fields['thoughtsTokenCount']),
  });
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}
