import { thinkPart, type ThinkPart } from '@kosong/core';

/**
 * What starts the `encrypted` field of a think part that holds a `redacted_thinking` block. Its `:`
 * never occurs in a signature (base64), so the two cannot be mistaken for each other.
 */
export const REDACTED_THINKING_PREFIX = 'redacted_thinking:';

/**
 * A `redacted_thinking` block as a think part: no text, and `encrypted` = the prefix + the block's
 * `data`. It survives JSON persistence (`encrypted` is a wire field) and goes back to the API as a
 * `redacted_thinking` block (the Python original turned it into an empty `thinking` block, which
 * the API rejects).
 */
export function redactedThinkPart(data: string): ThinkPart {
  return thinkPart('', REDACTED_THINKING_PREFIX + data);
}

/** The `data` of a think part made by {@link redactedThinkPart}; `undefined` for any other. */
export function redactedThinkingData(part: ThinkPart): string | undefined {
  return part.encrypted?.startsWith(REDACTED_THINKING_PREFIX) ? part.encrypted.slice(REDACTED_THINKING_PREFIX.length) : undefined;
}
