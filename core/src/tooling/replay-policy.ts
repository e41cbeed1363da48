import type { ToolCall } from '../message/parts.js';

/**
 * What may happen to a call whose start was recorded but whose outcome was not, when its step is
 * done again (a crash, a worker taken over, a resumed approval, a retried step): it may or may not
 * have run.
 *
 * - `'never'` (the default): it is not run again; the model gets an error result saying the call
 *   was interrupted and may have run (see `toolInterrupted`).
 * - `'safe'`: the tool is idempotent (a read, a lookup, or a write keyed by the call's
 *   `ToolContext.idempotencyKey`): it runs again. Calls of safe tools are not recorded at all.
 * - `'ask'`: the approval handler is asked (its request has `replay: true`); approving runs it again,
 *   denying gives the model the denial, deferring leaves the step waiting for a decision.
 */
export type ReplayPolicy = 'safe' | 'never' | 'ask';

/** The replay policy when a toolset declares none. */
export const DEFAULT_REPLAY_POLICY: ReplayPolicy = 'never';

/** Whether a value is a {@link ReplayPolicy}. */
export function isReplayPolicy(value: unknown): value is ReplayPolicy {
  return value === 'safe' || value === 'never' || value === 'ask';
}

/**
 * The replay policy of a call, as the toolset declares it (`Toolset.replayPolicy`); `'never'` when it
 * declares none, when its answer is not a policy, and when asking it throws (fail closed).
 *
 * `toolset` is any `Toolset` (typed by the one method read, so that this file and `toolset.ts` do
 * not import each other).
 */
export function replayPolicyOf(toolset: { replayPolicy?(toolCall: ToolCall): unknown }, call: ToolCall): ReplayPolicy {
  if (typeof toolset.replayPolicy !== 'function') return DEFAULT_REPLAY_POLICY;
  try {
    const policy = toolset.replayPolicy(call);
    return isReplayPolicy(policy) ? policy : DEFAULT_REPLAY_POLICY;
  } catch {
    return DEFAULT_REPLAY_POLICY;
  }
}
