import type { FinishReason } from '@kosong/core';

/**
 * Normalises a Chat Completions `finish_reason`: `stop`, `tool_calls` (and the legacy
 * `function_call`), `length`, `content_filter`; any other string is `other`.
 */
export function normalizeFinishReason(reason: string): FinishReason {
  switch (reason) {
    case 'stop':
    case 'tool_calls':
    case 'length':
    case 'content_filter':
      return reason;
    case 'function_call':
      return 'tool_calls';
    default:
      return 'other';
  }
}
