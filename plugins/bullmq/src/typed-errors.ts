/**
 * The typed errors of core that cross from a worker to the submitter with their fields: a timeout
 * budget that ran out, a tenant limit or a budget that refused a step.
 *
 * @module
 */
import { TenantBudgetExceededError, TenantLimitError, TimeoutBudgetError } from '@kosong/core';
import type { TenantBudgetExceededErrorFields, TenantLimitErrorFields } from '@kosong/core/kernel';

/** The fields of a typed error, as they travel (plain JSON). */
export type ErrorDetails = Readonly<Record<string, string | number | boolean | null>>;

/** The fields of `error` that let the submitter make it again, for the typed errors that have some (else `undefined`). */
export function errorDetails(error: unknown): ErrorDetails | undefined {
  if (TimeoutBudgetError.isInstance(error)) {
    const { budget, limitMs, stepId, turnId } = error;
    return { budget, limitMs, stepId: stepId ?? null, turnId: turnId ?? null };
  }
  if (TenantLimitError.isInstance(error)) {
    const { tenant, limit, max, current, retryAfterMs, requested, reason } = error;
    return { tenant, limit, max, current, retryAfterMs: retryAfterMs ?? null, requested: requested ?? null, reason };
  }
  if (TenantBudgetExceededError.isInstance(error)) {
    const { tenant, budgetUsd, spentUsd, per, retryAfterMs, reason, model } = error;
    return { tenant, budgetUsd, spentUsd, per, retryAfterMs, reason, model: model ?? null };
  }
  return undefined;
}

/**
 * The typed error a worker's error was (a `TimeoutBudgetError`, `TenantLimitError` or
 * `TenantBudgetExceededError` with the fields it had there), from its name and details; `undefined`
 * for any other, or for details that do not fit.
 */
export function reviveError(name: string, details: ErrorDetails | undefined): Error | undefined {
  if (details === undefined) return undefined;
  const orUndefined = <T>(value: T | null): T | undefined => (value === null ? undefined : value);
  try {
    switch (name) {
      case 'TimeoutBudgetError': {
        const { budget, limitMs, stepId, turnId } = details as { budget: TimeoutBudgetError['budget']; limitMs: number; stepId: string | null; turnId: string | null };
        return new TimeoutBudgetError({ budget, limitMs, stepId: orUndefined(stepId), turnId: orUndefined(turnId) });
      }
      case 'TenantLimitError': {
        const fields = details as unknown as TenantLimitErrorFields & { retryAfterMs: number | null; requested: number | null };
        return new TenantLimitError({ ...fields, retryAfterMs: orUndefined(fields.retryAfterMs), requested: orUndefined(fields.requested) });
      }
      case 'TenantBudgetExceededError': {
        const fields = details as unknown as TenantBudgetExceededErrorFields & { model: string | null };
        return new TenantBudgetExceededError({ ...fields, model: orUndefined(fields.model) });
      }
      default:
        return undefined;
    }
  } catch {
    return undefined;
  }
}
