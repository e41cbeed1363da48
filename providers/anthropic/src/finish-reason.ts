import type { FinishReason } from '@kosong/core';

/**
 * Normalises a Messages API `stop_reason`: `end_turn` and `stop_sequence` → `stop`, `tool_use` →
 * `tool_calls`, `max_tokens` and `model_context_window_exceeded` → `length`, `refusal` →
 * `content_filter`; anything else (`pause_turn`, …) → `other`.
 */
export function normalizeStopReason(reason: string): FinishReason {
  switch (reason) {
    case 'end_turn':
    case 'stop_sequence':
      return 'stop';
    case 'tool_use':
      return 'tool_calls';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'refusal':
      return 'content_filter';
    default:
      return 'other';
  }
}
