/**
 * The JSON error responses of the chat handler, and the refusals of a turn before its first step
 * (409, 404, 429) that are answered instead of a stream.
 *
 * @module
 */
import { ApprovalPendingError, NoPendingApprovalError, ResumeConflictError, TenantBudgetExceededError, TenantLimitError } from '@kosong/core';

/** A JSON error response: `{ "error": { "code", "message" } }`. */
export function jsonError(status: number, code: string, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ error: { code, message } }), { status, headers: { 'content-type': 'application/json; charset=utf-8', ...headers } });
}

/**
 * The response of a turn refused before its first step began, instead of a stream: 409 when
 * another turn took the chat (`ResumeConflictError`) or a step waits, 404 when nothing waits any
 * more, 429 when the tenant's limits refused; `undefined` for any other failure (the stream
 * carries it as an `error` chunk).
 */
export function refusalOf(error: unknown): Response | undefined {
  if (ResumeConflictError.isInstance(error)) return jsonError(409, 'resume_conflict', error.message);
  if (ApprovalPendingError.isInstance(error)) return jsonError(409, 'approval_pending', error.message);
  if (NoPendingApprovalError.isInstance(error)) return jsonError(404, 'no_pending_approval', 'No call waits for approval in this chat');
  if (TenantLimitError.isInstance(error)) {
    return limitError(error.retryAfterMs, { code: 'tenant_limit', message: error.message, limit: error.limit, max: error.max, current: error.current, retryAfterMs: error.retryAfterMs ?? null });
  }
  if (TenantBudgetExceededError.isInstance(error)) {
    return limitError(error.retryAfterMs, { code: 'tenant_budget_exceeded', message: error.message, reason: error.reason, budgetUsd: error.budgetUsd, spentUsd: error.spentUsd, per: error.per, retryAfterMs: error.retryAfterMs });
  }
  return undefined;
}

/** A 429 with `Retry-After` in whole seconds, rounded up (none for a cap, which frees when a running step ends). */
function limitError(retryAfterMs: number | undefined, error: Record<string, unknown>): Response {
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8' };
  if (retryAfterMs !== undefined) headers['retry-after'] = String(Math.ceil(Math.max(0, retryAfterMs) / 1000));
  return new Response(JSON.stringify({ error }), { status: 429, headers });
}

