import type { ModelRef } from './model-ref.js';

/**
 * The fallback passed over a model before its first part: its request failed with an error that
 * switches (`reason: 'error'`), its circuit breaker let no call through (`reason: 'circuit-open'`,
 * `error` a `CircuitOpenError`), or it rests for the `retry-after` of its last failure (`reason:
 * 'retry-after'`, `error` a `CircuitOpenError` whose `breaker` is `retry-after`). `to` is the next model of the chain, which is asked next (and may be
 * passed over in turn: each model passed over is one event). Frozen.
 */
export interface FallbackSwitchEvent {
  /** The model passed over. */
  readonly from: ModelRef;
  /** The model asked next. */
  readonly to: ModelRef;
  readonly reason: 'error' | 'circuit-open' | 'retry-after';
  /** The error of `from` (a `CircuitOpenError` when its breaker skipped it). */
  readonly error: unknown;
}

/**
 * The model in use failed after its first part was delivered: the fallback does not switch (the
 * next model would start the answer again, and what was delivered would be repeated), and the
 * error goes to the caller as it is. Not sent for an abort. Frozen.
 */
export interface FailureAfterOutputEvent {
  /** The model whose stream failed. */
  readonly model: ModelRef;
  readonly error: unknown;
}

/** The state of one model's circuit breaker. */
export type BreakerState = 'closed' | 'open' | 'half-open' | 'isolated';

/** A model's circuit breaker changed state. Frozen. */
export interface BreakerChangeEvent {
  readonly model: ModelRef;
  readonly state: BreakerState;
  /** For `open`: the failure that opened it (the model's error). */
  readonly error?: unknown;
}

/** Which listener of the policy failed (`onProviderSwitch`: the one core gave the call, see `ProviderGenerateOptions`). */
export type FallbackListenerName = 'onSwitch' | 'onFailureAfterOutput' | 'onBreakerChange' | 'onProviderSwitch';

/** Receives the failures of the policy's listeners; must not throw. */
export type FallbackListenerErrorHandler = (error: unknown, listener: FallbackListenerName) => void;

/** The default handler: one line on stderr. */
export const writeListenerErrorToStderr: FallbackListenerErrorHandler = (error, listener) => {
  const reason = error instanceof Error ? error.message : String(error);
  process.stderr.write(`[kosong] fallbackProvider ${listener} failed: ${reason}\n`);
};

/**
 * Calls a listener guarded: a throw or a rejection goes to `onError` (and, if that throws, to stderr),
 * never to the call. The listener is not awaited.
 */
export function notify<E>(
  listener: ((event: E) => unknown) | undefined,
  event: E,
  name: FallbackListenerName,
  onError: FallbackListenerErrorHandler,
): void {
  if (listener === undefined) return;
  const report = (error: unknown): void => {
    try {
      onError(error, name);
    } catch (failure) {
      writeListenerErrorToStderr(failure, name);
    }
  };
  try {
    const result = listener(event);
    if (typeof result === 'object' && result !== null && typeof (result as PromiseLike<unknown>).then === 'function') {
      (result as PromiseLike<unknown>).then(undefined, report);
    }
  } catch (error) {
    report(error);
  }
}
