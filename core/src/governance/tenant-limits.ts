/**
 * The limits a tenant is held to (pacing, concurrency, budget), and their validation.
 *
 * @module
 */

/** Over what period a {@link TenantBudget} is counted: the UTC calendar day or month. */
export type BudgetPeriod = 'day' | 'month';

/** A spending cap: at most `usd` US dollars of model cost per UTC day or month, as the usage ledger counts it. */
export interface TenantBudget {
  /** The cap in US dollars (finite, ≥ 0). */
  readonly usd: number;
  /** The period it is counted over (UTC): `'day'` or `'month'`. */
  readonly per: BudgetPeriod;
}

/**
 * What a request over a pacing or concurrency limit does: `'wait'` (the default) waits for room,
 * at most {@link TenantLimits.maxWaitMs} and as long as the step's (or the tool call's) signal has
 * not aborted; `'refuse'` fails at once with a `TenantLimitError`.
 */
export type LimitPolicy = 'wait' | 'refuse';

/**
 * The limits of a tenant (`kernel.tenants.define(id, { limits })`, `tenants.setLimits`) or the
 * default of every tenant without limits of its own (`KernelOptions.limits`,
 * `tenants.setDefaultLimits`). Every field is optional; a field left out is no limit. Enforced, in
 * memory (in this process only), by the kernel's runners (`kernel.runner()`, `kernel.agent()`):
 *
 * - `requestsPerMinute`, `tokensPerMinute`: pacing of model requests (one per step), each a fixed
 *   window of one minute per tenant (rate-limiter-flexible's memory store: the window opens at the
 *   first request after the last one closed). Tokens are estimated before the step (the request's
 *   characters / 4, see `estimateRequestTokens`) and corrected from the provider's `TokenUsage`
 *   when the step ends;
 * - `maxConcurrentSteps`, `maxConcurrentToolCalls`: caps; what is over a cap queues in arrival
 *   order (FIFO), per tenant, so one tenant's queue never delays another's;
 * - `budget`: a step that would start once the tenant's spend of the period has reached the budget
 *   is refused with a `TenantBudgetExceededError`. A running step is never cut off by a budget, so
 *   the step that crosses it finishes (and is the last one admitted).
 */
export interface TenantLimits {
  /** Model requests (steps) per minute: a positive integer. */
  readonly requestsPerMinute?: number;
  /** Tokens (input and output) per minute: a positive integer. */
  readonly tokensPerMinute?: number;
  /** Steps running at once: a positive integer. */
  readonly maxConcurrentSteps?: number;
  /** Tool calls running at once, over all of the tenant's steps: a positive integer. */
  readonly maxConcurrentToolCalls?: number;
  /** A spending cap per UTC day or month. */
  readonly budget?: TenantBudget;
  /** Wait for room or refuse at once, over a pacing or concurrency limit; default `'wait'`. */
  readonly onLimit?: LimitPolicy;
  /**
   * With `onLimit: 'wait'`, how long a step or a tool call may wait for room, in milliseconds (an
   * integer, 0 to 24 hours); default 60 000. A wait that would be longer is refused at once with a
   * `TenantLimitError` (its `retryAfterMs` says when to try again).
   */
  readonly maxWaitMs?: number;
}

/** The default of {@link TenantLimits.maxWaitMs}. */
export const DEFAULT_LIMIT_MAX_WAIT_MS = 60_000;

/** The largest count a limit may have: far beyond any real quota, well within a safe integer. */
const MAX_COUNT = 1e12;
/** The largest budget, in US dollars. */
const MAX_USD = 1e12;
/** The longest wait: one day. */
const MAX_WAIT_MS = 86_400_000;

const COUNT_FIELDS = ['requestsPerMinute', 'tokensPerMinute', 'maxConcurrentSteps', 'maxConcurrentToolCalls'] as const;
const KNOWN: ReadonlySet<string> = new Set<string>([...COUNT_FIELDS, 'budget', 'onLimit', 'maxWaitMs']);

/**
 * Checks limits and returns a frozen copy of them (`undefined` for none), so that a caller who
 * changes the object afterwards changes nothing. Fails closed: an unknown field (a misspelt
 * `requestPerMinute` would otherwise leave a tenant unlimited) is an error.
 *
 * @throws TypeError naming `owner` and the field: not an object, an unknown field, a count that is
 * not a positive safe integer (0, negative, fractional, NaN, Infinity) or above 10¹², a budget that
 * is not `{ usd, per }` with `usd` finite, ≥ 0 and at most 10¹² and `per` `'day'` or `'month'`, an
 * `onLimit` other than `'wait'` / `'refuse'`, a `maxWaitMs` that is not an integer from 0 to 86 400 000.
 */
export function validateTenantLimits(owner: string, limits: unknown): TenantLimits | undefined {
  if (limits === undefined) return undefined;
  if (typeof limits !== 'object' || limits === null || Array.isArray(limits)) throw new TypeError(`${owner}: limits must be an object`);
  const given = limits as Record<string, unknown>;
  for (const key of Object.keys(given)) {
    if (!KNOWN.has(key)) throw new TypeError(`${owner}: unknown limit "${key}" (the limits: ${[...KNOWN].join(', ')})`);
  }
  const checked: Record<string, unknown> = {};
  for (const field of COUNT_FIELDS) {
    const value = given[field];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1 || value > MAX_COUNT) {
      throw new TypeError(`${owner}: limits.${field} must be a positive integer of at most ${MAX_COUNT} (got ${describe(value)})`);
    }
    checked[field] = value;
  }
  if (given.budget !== undefined) checked.budget = validateBudget(owner, given.budget);
  if (given.onLimit !== undefined) {
    if (given.onLimit !== 'wait' && given.onLimit !== 'refuse') throw new TypeError(`${owner}: limits.onLimit must be 'wait' or 'refuse' (got ${describe(given.onLimit)})`);
    checked.onLimit = given.onLimit;
  }
  if (given.maxWaitMs !== undefined) {
    const wait = given.maxWaitMs;
    if (typeof wait !== 'number' || !Number.isSafeInteger(wait) || wait < 0 || wait > MAX_WAIT_MS) {
      throw new TypeError(`${owner}: limits.maxWaitMs must be an integer from 0 to ${MAX_WAIT_MS} (got ${describe(wait)})`);
    }
    checked.maxWaitMs = wait;
  }
  return Object.freeze(checked) as TenantLimits;
}

function validateBudget(owner: string, budget: unknown): TenantBudget {
  if (typeof budget !== 'object' || budget === null || Array.isArray(budget)) throw new TypeError(`${owner}: limits.budget must be an object { usd, per }`);
  const given = budget as Record<string, unknown>;
  for (const key of Object.keys(given)) {
    if (key !== 'usd' && key !== 'per') throw new TypeError(`${owner}: unknown field "${key}" in limits.budget (its fields: usd, per)`);
  }
  const { usd, per } = given;
  if (typeof usd !== 'number' || !Number.isFinite(usd) || usd < 0 || usd > MAX_USD) {
    throw new TypeError(`${owner}: limits.budget.usd must be a finite number from 0 to ${MAX_USD} (got ${describe(usd)})`);
  }
  if (per !== 'day' && per !== 'month') throw new TypeError(`${owner}: limits.budget.per must be 'day' or 'month' (got ${describe(per)})`);
  return Object.freeze({ usd, per });
}

/** Whether limits limit anything (a policy alone does not). */
export function limitsAnything(limits: TenantLimits | undefined): limits is TenantLimits {
  if (limits === undefined) return false;
  return (
    limits.requestsPerMinute !== undefined ||
    limits.tokensPerMinute !== undefined ||
    limits.maxConcurrentSteps !== undefined ||
    limits.maxConcurrentToolCalls !== undefined ||
    limits.budget !== undefined
  );
}

function describe(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : typeof value === 'object' && value !== null ? 'an object' : String(value);
}
