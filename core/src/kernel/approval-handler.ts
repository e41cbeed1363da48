import type { ApprovalDecision, ApprovalRequest } from '../tooling/approval.js';

/**
 * Decides about tool calls that need approval in the steps the kernel runs (see `ApprovalDecision`).
 * Bind one with `ctx.bindApprovalHandler(handler)`; the last one bound wins, and a tenant's own
 * (bound in its `module`) wins for that tenant. An `onApproval` given to the runner, the agent or
 * the turn wins over it. Without any, calls that need approval are deferred.
 *
 * It is guarded like a hook: a throw, a rejection or a value that is no decision is reported to the
 * hook-error sink (as `options.onApproval`) and denies the call.
 */
export interface ApprovalHandler {
  decide(request: ApprovalRequest): ApprovalDecision | Promise<ApprovalDecision>;
}

/** Service identifier of {@link ApprovalHandler}. */
export const ApprovalHandler: unique symbol = Symbol.for('kosong.ApprovalHandler');
