/**
 * The errors of tenant limits: a pacing or concurrency limit that refused (or waited too long),
 * and a budget spent. Each has a static `isInstance(e)` that works across duplicated package copies.
 *
 * @module
 */
import { errorMarker, hasErrorMarker, markError } from '../error-marker.js';
import type { BudgetPeriod } from './tenant-limits.js';

const TENANT_LIMIT_ERROR = errorMarker('TenantLimitError');
const TENANT_BUDGET_EXCEEDED_ERROR = errorMarker('TenantBudgetExceededError');

/** The pacing and concurrency limits a {@link TenantLimitError} can name. */
export type TenantLimitName = 'requestsPerMinute' | 'tokensPerMinute' | 'maxConcurrentSteps' | 'maxConcurrentToolCalls';

/** Fields of a {@link TenantLimitError}. */
export interface TenantLimitErrorFields {
  readonly tenant: string;
  readonly limit: TenantLimitName;
  /** The limit's value (requests or tokens per minute, or the cap). */
  readonly max: number;
  /**
   * What the tenant uses of it now: requests or tokens counted in the current minute (the
   * request's own estimate not included), or steps / tool calls running.
   */
  readonly current: number;
  /**
   * When to try again, in milliseconds: when the current minute's window closes (pacing);
   * `undefined` for a cap, which frees up when a running step or call ends.
   */
  readonly retryAfterMs: number | undefined;
  /** For `tokensPerMinute`: the tokens the request was estimated at. */
  readonly requested?: number | undefined;
  /** Why: `'refused'` (the policy is `onLimit: 'refuse'`, or the wait would pass `maxWaitMs`), `'timeout'` (it waited `maxWaitMs` in a queue). */
  readonly reason: 'refused' | 'timeout';
}

/**
 * A step (or a tool call) of a tenant was not admitted: over a pacing limit or a concurrency cap,
 * with the tenant's policy `onLimit: 'refuse'`, or with a wait that would pass (or passed) its
 * `maxWaitMs`. Nothing of the step ran: the provider was not asked (a tool call's error result
 * says so to the model).
 */
export class TenantLimitError extends Error implements TenantLimitErrorFields {
  readonly tenant: string;
  readonly limit: TenantLimitName;
  readonly max: number;
  readonly current: number;
  readonly retryAfterMs: number | undefined;
  readonly requested: number | undefined;
  readonly reason: 'refused' | 'timeout';

  constructor(fields: TenantLimitErrorFields) {
    const { tenant, limit, max, current, retryAfterMs, requested, reason } = fields;
    const asked = requested === undefined ? '' : ` (this request: ~${requested})`;
    const retry = retryAfterMs === undefined ? '' : `; retry after ${retryAfterMs} ms`;
    const why = reason === 'timeout' ? ', and waiting for room took longer than its maxWaitMs' : '';
    super(`Tenant "${tenant}" is over its limit ${limit} = ${max}: ${current} in use${asked}${why}${retry}`);
    this.name = 'TenantLimitError';
    this.tenant = tenant;
    this.limit = limit;
    this.max = max;
    this.current = current;
    this.retryAfterMs = retryAfterMs;
    this.requested = requested;
    this.reason = reason;
    markError(this, TENANT_LIMIT_ERROR);
  }

  /** Whether `error` is a {@link TenantLimitError}. */
  static isInstance(error: unknown): error is TenantLimitError {
    return hasErrorMarker(error, TENANT_LIMIT_ERROR);
  }
}

/** Fields of a {@link TenantBudgetExceededError}. */
export interface TenantBudgetExceededErrorFields {
  readonly tenant: string;
  /** The budget, in US dollars. */
  readonly budgetUsd: number;
  /** What the tenant spent in the period so far (steps of a known cost), in US dollars. */
  readonly spentUsd: number;
  readonly per: BudgetPeriod;
  /** Milliseconds until the period ends (UTC midnight, or the first of the next month). */
  readonly retryAfterMs: number;
  /**
   * `'spent'`: the spend reached the budget; `'unpriced'`: the step's model has no price (neither
   * in the kernel's `prices` nor in the model catalog), so the budget could not hold it.
   */
  readonly reason: 'spent' | 'unpriced';
  /** For `'unpriced'`: the provider and model without a price. */
  readonly model?: string | undefined;
}

/**
 * A step of a tenant with a budget was refused before it started: the tenant's spend of the period
 * (from the usage ledger) has reached the budget, or the step's model has no price. A running step
 * is never cut off by its budget: the step that crosses it finishes, and the next one is refused.
 */
export class TenantBudgetExceededError extends Error implements TenantBudgetExceededErrorFields {
  readonly tenant: string;
  readonly budgetUsd: number;
  readonly spentUsd: number;
  readonly per: BudgetPeriod;
  readonly retryAfterMs: number;
  readonly reason: 'spent' | 'unpriced';
  readonly model: string | undefined;

  constructor(fields: TenantBudgetExceededErrorFields) {
    const { tenant, budgetUsd, spentUsd, per, retryAfterMs, reason, model } = fields;
    super(
      reason === 'unpriced'
        ? `Tenant "${tenant}" has a budget of $${budgetUsd} per ${per}, and the model ${model ?? '?'} has no price: give it one in the kernel's prices`
        : `Tenant "${tenant}" has spent $${round(spentUsd)} of its budget of $${budgetUsd} per ${per}; it renews in ${retryAfterMs} ms`,
    );
    this.name = 'TenantBudgetExceededError';
    this.tenant = tenant;
    this.budgetUsd = budgetUsd;
    this.spentUsd = spentUsd;
    this.per = per;
    this.retryAfterMs = retryAfterMs;
    this.reason = reason;
    this.model = model;
    markError(this, TENANT_BUDGET_EXCEEDED_ERROR);
  }

  /** Whether `error` is a {@link TenantBudgetExceededError}. */
  static isInstance(error: unknown): error is TenantBudgetExceededError {
    return hasErrorMarker(error, TENANT_BUDGET_EXCEEDED_ERROR);
  }
}

function round(usd: number): string {
  return usd.toFixed(6).replace(/\.?0+$/, '');
}
