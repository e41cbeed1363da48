import { isRetryableError } from '@kosong/core';
import { checkKnownOptions, type KnownOptions } from '@kosong/core/provider-kit';

import {
  writeListenerErrorToStderr,
  type BreakerChangeEvent,
  type FailureAfterOutputEvent,
  type FallbackListenerErrorHandler,
  type FallbackSwitchEvent,
} from './fallback-events.js';
import type { ModelRef } from './model-ref.js';

/** The circuit breaker every model of the chain gets (each its own, with these settings). */
export interface BreakerPolicy {
  /**
   * Failures in a row (errors that switch, see {@link FallbackPolicy.shouldSwitch}) after which a
   * model's breaker opens and the model is skipped; a positive integer, default 3.
   */
  readonly consecutiveFailures?: number | undefined;
  /**
   * How long an open breaker skips its model, in ms; default 30 000. After it, the next call is a
   * trial (half-open): a success closes the breaker, a failure opens it again for as long.
   */
  readonly halfOpenAfterMs?: number | undefined;
  /**
   * The longest a model is left alone for a `retry-after` its counted failure carried (an
   * `APIStatusError`'s `retryAfterSeconds`, e.g. of a 429), in ms: it is skipped that long, while a
   * later model of the chain can be asked (the last model is always asked: its own error, with its
   * `retry-after`, is then the caller's, for the agent loop's retry). Default 300 000 (5 min); `0`:
   * a `retry-after` is ignored (the failure counts like any other).
   */
  readonly maxRetryAfterMs?: number | undefined;
}

/** How a fallback provider moves along its chain. Every field is optional; an unknown field is a `TypeError`. */
export interface FallbackPolicy {
  /**
   * Whether an error of a model, before its first part, moves on to the next model (and counts
   * against the model's breaker). Default: core's `isRetryableError` (a connection error, a timeout,
   * an empty response, HTTP 429, 500, 502, 503, 504, 529). Never asked about an abort, nor about a
   * failure after the first part (neither switches). Combine with the default to widen it:
   * `(error) => isRetryableError(error) || UnsupportedGenerationOptionError.isInstance(error)`.
   */
  readonly shouldSwitch?: ((error: unknown, model: ModelRef) => boolean) | undefined;
  /** Each model's circuit breaker ({@link BreakerPolicy}), or `false` for none. Default: a breaker with the defaults. */
  readonly breaker?: BreakerPolicy | false | undefined;
  /** Each model passed over (see {@link FallbackSwitchEvent}). Guarded, not awaited. */
  readonly onSwitch?: ((event: FallbackSwitchEvent) => void | Promise<void>) | undefined;
  /** The model in use failed after its first part: no switch (see {@link FailureAfterOutputEvent}). Guarded, not awaited. */
  readonly onFailureAfterOutput?: ((event: FailureAfterOutputEvent) => void | Promise<void>) | undefined;
  /** A model's breaker opened, half-opened, closed or was isolated. Guarded, not awaited. */
  readonly onBreakerChange?: ((event: BreakerChangeEvent) => void | Promise<void>) | undefined;
  /** Receives the failures of the listeners above; default: one line on stderr. */
  readonly onListenerError?: FallbackListenerErrorHandler | undefined;
}

/** Default of {@link BreakerPolicy.consecutiveFailures}. */
export const DEFAULT_CONSECUTIVE_FAILURES = 3;
/** Default of {@link BreakerPolicy.halfOpenAfterMs}. */
export const DEFAULT_HALF_OPEN_AFTER_MS = 30_000;
/** Default of {@link BreakerPolicy.maxRetryAfterMs}. */
export const DEFAULT_MAX_RETRY_AFTER_MS = 300_000;

/** Breaker settings checked, with their defaults. */
export interface ResolvedBreaker {
  readonly consecutiveFailures: number;
  readonly halfOpenAfterMs: number;
  readonly maxRetryAfterMs: number;
}

/** A policy checked, with its defaults. */
export interface ResolvedPolicy {
  readonly shouldSwitch: (error: unknown, model: ModelRef) => boolean;
  readonly breaker: ResolvedBreaker | undefined;
  readonly onSwitch: ((event: FallbackSwitchEvent) => unknown) | undefined;
  readonly onFailureAfterOutput: ((event: FailureAfterOutputEvent) => unknown) | undefined;
  readonly onBreakerChange: ((event: BreakerChangeEvent) => unknown) | undefined;
  readonly onListenerError: FallbackListenerErrorHandler;
}

const KNOWN_POLICY: KnownOptions<FallbackPolicy> = {
  shouldSwitch: true,
  breaker: true,
  onSwitch: true,
  onFailureAfterOutput: true,
  onBreakerChange: true,
  onListenerError: true,
};

const KNOWN_BREAKER: KnownOptions<BreakerPolicy> = { consecutiveFailures: true, halfOpenAfterMs: true, maxRetryAfterMs: true };

const OWNER = 'fallbackProvider';

/**
 * Checks a policy and fills in its defaults.
 *
 * @throws TypeError for an unknown option (of the policy or of its `breaker`) or a value of the wrong type or range.
 */
export function resolvePolicy(policy: FallbackPolicy): ResolvedPolicy {
  checkKnownOptions(OWNER, policy, KNOWN_POLICY);
  const shouldSwitch = functionOrUndefined(policy.shouldSwitch, 'shouldSwitch');
  return {
    shouldSwitch: shouldSwitch ?? isRetryableError,
    breaker: resolveBreaker(policy.breaker),
    onSwitch: functionOrUndefined(policy.onSwitch, 'onSwitch'),
    onFailureAfterOutput: functionOrUndefined(policy.onFailureAfterOutput, 'onFailureAfterOutput'),
    onBreakerChange: functionOrUndefined(policy.onBreakerChange, 'onBreakerChange'),
    onListenerError: functionOrUndefined(policy.onListenerError, 'onListenerError') ?? writeListenerErrorToStderr,
  };
}

function resolveBreaker(breaker: BreakerPolicy | false | undefined): ResolvedBreaker | undefined {
  if (breaker === false) return undefined;
  if (breaker === undefined) return { consecutiveFailures: DEFAULT_CONSECUTIVE_FAILURES, halfOpenAfterMs: DEFAULT_HALF_OPEN_AFTER_MS, maxRetryAfterMs: DEFAULT_MAX_RETRY_AFTER_MS };
  if (typeof breaker !== 'object' || breaker === null || Array.isArray(breaker)) {
    throw new TypeError(`${OWNER}: policy.breaker must be an object or false, got ${describe(breaker)}`);
  }
  checkKnownOptions(`${OWNER}: policy.breaker`, breaker, KNOWN_BREAKER);
  const { consecutiveFailures = DEFAULT_CONSECUTIVE_FAILURES, halfOpenAfterMs = DEFAULT_HALF_OPEN_AFTER_MS, maxRetryAfterMs = DEFAULT_MAX_RETRY_AFTER_MS } = breaker;
  if (!Number.isSafeInteger(consecutiveFailures) || consecutiveFailures < 1) {
    throw new TypeError(`${OWNER}: policy.breaker.consecutiveFailures must be a positive integer, got ${describe(consecutiveFailures)}`);
  }
  if (typeof halfOpenAfterMs !== 'number' || !Number.isFinite(halfOpenAfterMs) || halfOpenAfterMs < 0) {
    throw new TypeError(`${OWNER}: policy.breaker.halfOpenAfterMs must be a finite number of ms, 0 or more, got ${describe(halfOpenAfterMs)}`);
  }
  if (typeof maxRetryAfterMs !== 'number' || !Number.isFinite(maxRetryAfterMs) || maxRetryAfterMs < 0) {
    throw new TypeError(`${OWNER}: policy.breaker.maxRetryAfterMs must be a finite number of ms, 0 or more, got ${describe(maxRetryAfterMs)}`);
  }
  return { consecutiveFailures, halfOpenAfterMs, maxRetryAfterMs };
}

function functionOrUndefined<F>(value: F | undefined, name: string): F | undefined {
  if (value !== undefined && typeof value !== 'function') throw new TypeError(`${OWNER}: policy.${name} must be a function, got ${describe(value)}`);
  return value;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return typeof value;
}
