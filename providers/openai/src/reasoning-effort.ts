import type { ThinkingEffort } from '@kosong/core';

/** The `reasoning_effort` values of the Chat Completions API that kosong maps to. */
export type ReasoningEffort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh';

/**
 * The `reasoning_effort` for a thinking effort (kosong spec §7.1): `off` → none (the caller decides
 * whether to send `"none"` or nothing), `max` → `xhigh` (the highest OpenAI level), others as they are.
 */
export function thinkingEffortToReasoningEffort(effort: ThinkingEffort): Exclude<ReasoningEffort, 'minimal'> {
  switch (effort) {
    case 'off':
      return 'none';
    case 'max':
      return 'xhigh';
    default:
      return effort;
  }
}

/** The thinking effort a `reasoning_effort` amounts to: `minimal` → `low`, `none` (or nothing) → `off`. */
export function reasoningEffortToThinkingEffort(effort: ReasoningEffort | undefined): ThinkingEffort {
  switch (effort) {
    case undefined:
    case 'none':
      return 'off';
    case 'minimal':
      return 'low';
    default:
      return effort;
  }
}
