import type { FinishReason } from '@kosong/core';

/** Gemini finish reasons that mean the response was stopped for its content. */
const CONTENT_FILTER = new Set([
  'SAFETY',
  'RECITATION',
  'BLOCKLIST',
  'PROHIBITED_CONTENT',
  'SPII',
  'IMAGE_SAFETY',
  'IMAGE_PROHIBITED_CONTENT',
  'IMAGE_RECITATION',
]);

/**
 * Normalises a Gemini `finishReason`: `STOP` is `tool_calls` when the response called a function
 * (Gemini says `STOP` then too) and `stop` otherwise; `MAX_TOKENS` is `length`; the safety,
 * recitation and blocklist reasons are `content_filter`; anything else (`MALFORMED_FUNCTION_CALL`,
 * `OTHER`, a reason added later) is `other`.
 */
export function normalizeFinishReason(reason: string, calledFunctions: boolean): FinishReason {
  if (reason === 'STOP') return calledFunctions ? 'tool_calls' : 'stop';
  if (reason === 'MAX_TOKENS') return 'length';
  return CONTENT_FILTER.has(reason) ? 'content_filter' : 'other';
}
