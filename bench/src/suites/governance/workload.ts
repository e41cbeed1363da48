/**
 * The constants of the `governance` suite (without its variants' imports, which the suite list
 * does not load).
 *
 * @module
 */
import type { TenantLimits } from '@kosong/core/kernel';

/** Steps per timed run, one after the other. */
export const STEPS = 2_000;

/** Steps per timed run of the Redis variants (each step makes round trips to a local redis-server). */
export const REDIS_STEPS = 500;

/** The tenant the steps run for. */
export const TENANT = 'acme';

/**
 * The limits of the `limits` variant: every kind the governor enforces, each high enough never to
 * make a step or a call wait (one step runs at a time, 2 calls each), so that only their bookkeeping is measured.
 */
export const LIMITS: TenantLimits = {
  requestsPerMinute: 1_000_000_000,
  tokensPerMinute: 1_000_000_000_000,
  maxConcurrentSteps: 4,
  maxConcurrentToolCalls: 8,
  budget: { usd: 1_000_000, per: 'day' },
};
