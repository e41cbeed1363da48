import type { ContentPart, ToolCall } from '../message/parts.js';
import type { ToolResult } from '../tooling/tool-result.js';

/**
 * Where a step records its calls, so that a step done again (after a crash, a takeover, a resumed
 * approval, a retry) never runs a call twice unasked: the start of a call is recorded — durably —
 * before the toolset is called, its outcome when it settles. `Agent` makes one per step over its
 * context's call ledger; a bare `step()` has none.
 *
 * Calls whose tool's replay policy is `'safe'` are recorded too (so that a redone step gives them the
 * same idempotency key), without a sync to disk of their own.
 */
export interface StepLedger {
  /**
   * The stable identity of the step (session, turn, step of the turn): each call's
   * `ToolContext.idempotencyKey` is `` `${key}/${index}` ``.
   */
  readonly key: string;
  /**
   * Records that call `index` is about to run, with the message so far: its content parts and the
   * calls made so far (this one among them). Resolves once the record would survive the process —
   * and, unless `sync` is `false` (a call whose tool is `'safe'` to run again), a power cut too; the
   * toolset is called only then; `undefined` (not a promise): recorded already, the call runs at once.
   * A rejection (or a throw): the call does not run (an error result saying so).
   */
  callStarted(index: number, content: readonly ContentPart[], toolCalls: readonly ToolCall[], sync?: boolean): Promise<void> | undefined;
  /**
   * Records the outcome of call `index`. Not called for a call that settles after the step was
   * cancelled (its outcome is "interrupted"). Must not throw; its durability may lag (a lost
   * outcome only makes the call count as interrupted). `ran` is `false` for a call whose start was
   * recorded but which the step then did not run (it was cancelled meanwhile).
   */
  callSettled(index: number, result: ToolResult, ran?: false): void;
}
