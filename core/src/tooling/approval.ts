import type { ToolCall } from '../message/parts.js';

/**
 * What an approval handler decides about one tool call:
 *
 * - `approve`: the call runs;
 * - `deny`: the call does not run; the model gets an error result saying so, with `reason` (for the
 *   model: say what to do instead);
 * - `defer`: nobody can decide now. The call does not run and its result is marked
 *   {@link ToolResult.deferred}; the agent loop then ends the turn with `stopReason:
 *   'approval_required'`, records the step durably, and `agent.resume({ decisions })` goes on later
 *   (in this process or another).
 */
export type ApprovalDecision =
  | { readonly type: 'approve' }
  | { readonly type: 'deny'; readonly reason?: string }
  | { readonly type: 'defer' };

/** What an approval handler is asked. */
export interface ApprovalRequest {
  /** The call that waits. Its arguments are the model's, as they came (`toolCall.function.arguments`). */
  readonly toolCall: ToolCall;
  /** Position of the call in the step's tool calls. */
  readonly index: number;
  /** The step the call belongs to. */
  readonly stepId: string;
  /** The tenant the step runs for, if any. */
  readonly tenant: string | undefined;
  /**
   * `true` when the call started before and was interrupted (its outcome never recorded: it may have
   * run), and its tool's replay policy is `'ask'`: approving runs it again. Absent otherwise.
   */
  readonly replay?: true;
  /**
   * Aborted when the decision is no longer wanted: the step aborted, or the approval timed out.
   * A handler that asks a person should stop asking then.
   */
  readonly signal: AbortSignal;
}

/**
 * Decides about calls that need approval (`onApproval` of `step`, a kernel runner or an agent). It
 * is guarded like a hook: a throw, a rejection, or something that is not an {@link ApprovalDecision}
 * is reported to the hook-error handler and counts as a denial; a handler that has not decided
 * within the approval timeout (when one is set) is reported as timed out and counts as a denial too.
 */
export type ApprovalCallback = (request: ApprovalRequest) => ApprovalDecision | Promise<ApprovalDecision>;

/** Whether a value is an {@link ApprovalDecision}. */
export function isApprovalDecision(value: unknown): value is ApprovalDecision {
  if (typeof value !== 'object' || value === null) return false;
  const { type, reason } = value as { type?: unknown; reason?: unknown };
  if (type === 'approve' || type === 'defer') return true;
  return type === 'deny' && (reason === undefined || typeof reason === 'string');
}
