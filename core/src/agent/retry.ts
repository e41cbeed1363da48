import { APIConnectionError, APIEmptyResponseError, APIStatusError, APITimeoutError } from '../provider/errors.js';

/** How the agent loop retries a step whose provider call failed. */
export interface RetryPolicy {
  /** Attempts per step, the first included. */
  readonly maxAttempts: number;
  /** Delay before the second attempt; doubles with each further attempt. */
  readonly initialDelayMs: number;
  /** Cap of the exponential delay. */
  readonly maxDelayMs: number;
  /** Up to this much random delay is added to each wait (so clients do not retry in lockstep). */
  readonly jitterMs: number;
  /** Cap of a server's `retry-after`; a longer wait is not worth blocking the turn for. */
  readonly maxRetryAfterMs: number;
}

/** kimi-cli's policy: 3 attempts, 0.3 s doubling up to 5 s, plus up to 0.5 s jitter. */
export const defaultRetryPolicy: RetryPolicy = {
  maxAttempts: 3,
  initialDelayMs: 300,
  maxDelayMs: 5_000,
  jitterMs: 500,
  maxRetryAfterMs: 60_000,
};

const RETRYABLE_STATUS = new Set([429, 500, 502, 503, 504, 529]);

/**
 * Whether a step failure is worth another attempt: a connection error, a timeout, an empty
 * response, or HTTP status 429, 500, 502, 503, 504 or 529 (Anthropic's `overloaded_error`). Anything
 * else (a 400, an abort, a bug) is not.
 */
export function isRetryableError(error: unknown): boolean {
  if (APIStatusError.isInstance(error)) return RETRYABLE_STATUS.has(error.statusCode);
  return APIConnectionError.isInstance(error) || APITimeoutError.isInstance(error) || APIEmptyResponseError.isInstance(error);
}

/**
 * How long to wait before attempt `attempt + 1`: the server's `retry-after` when it gave one (capped),
 * else `min(initialDelay · 2^(attempt-1) + U(0, jitter), maxDelay)`.
 */
export function retryDelayMs(policy: RetryPolicy, attempt: number, error: unknown, random: () => number = Math.random): number {
  if (APIStatusError.isInstance(error) && error.retryAfterSeconds !== undefined) {
    return Math.min(Math.max(0, error.retryAfterSeconds * 1000), policy.maxRetryAfterMs);
  }
  const exponential = policy.initialDelayMs * 2 ** (attempt - 1) + random() * policy.jitterMs;
  return Math.min(exponential, policy.maxDelayMs);
}
