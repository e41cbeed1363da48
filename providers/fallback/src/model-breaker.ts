import { CircuitState, ConsecutiveBreaker, circuitBreaker, handleWhenResult, isBrokenCircuitError, isIsolatedCircuitError, type CircuitBreakerPolicy } from 'cockatiel';

import { CircuitOpenError } from './errors.js';
import type { BreakerChangeEvent, BreakerState } from './fallback-events.js';
import type { ResolvedBreaker } from './fallback-policy.js';
import type { ModelRef } from './model-ref.js';

/**
 * What one call of a model came to, as its breaker counts it:
 * - `started`: the model delivered its first part (or ended without any): a success;
 * - `failed` with `counts`: a failure of the model (an error that switches, or an aborted trial call);
 * - `failed` without `counts`: an error that says nothing about the model's health (an abort, an
 *   error that does not switch, such as a bad request): not counted (a trial call ending so closes
 *   the breaker: the model answered);
 * - `skipped`: the breaker let no call through.
 */
export type CallOutcome<T> =
  | { readonly kind: 'started'; readonly value: T }
  | { readonly kind: 'failed'; readonly error: unknown; readonly counts: boolean }
  | { readonly kind: 'skipped'; readonly error: CircuitOpenError };

/** An error the breaker must not count: thrown through cockatiel's policy, which lets it pass uncounted. */
class Uncounted {
  constructor(readonly error: unknown) {}
}

/**
 * The circuit breaker of one model of a chain: a cockatiel `CircuitBreakerPolicy` with a
 * `ConsecutiveBreaker`. Shared by every call (every step) of the fallback provider that holds it, and
 * by its copies (`withThinking`, `withGeneration`): they call the same endpoints.
 *
 * One difference from cockatiel's own handling of a half-open breaker: while a trial call runs, other
 * calls do not wait for it (cockatiel's `execute` would); they skip the model at once.
 */
export class ModelBreaker {
  readonly #policy: CircuitBreakerPolicy;
  readonly #halfOpenAfterMs: number;
  /** When the breaker last opened (epoch ms, cockatiel's clock: `Date.now()`). */
  #openedAt = 0;
  readonly #maxRetryAfterMs: number;
  /** Until when the model's last counted failure asked to be left alone (`retry-after`; epoch ms). */
  #restUntil = 0;

  constructor(
    readonly model: ModelRef,
    settings: ResolvedBreaker,
    onChange: ((event: BreakerChangeEvent) => void) | undefined,
  ) {
    this.#halfOpenAfterMs = settings.halfOpenAfterMs;
    this.#maxRetryAfterMs = settings.maxRetryAfterMs;
    this.#policy = circuitBreaker(
      handleWhenResult((outcome) => (outcome as CallOutcome<unknown>).kind === 'failed'),
      { halfOpenAfter: settings.halfOpenAfterMs, breaker: new ConsecutiveBreaker(settings.consecutiveFailures) },
    );
    this.#policy.onBreak(() => {
      this.#openedAt = Date.now();
    });
    if (onChange !== undefined) {
      this.#policy.onStateChange((state) => {
        const name = STATES[state];
        const failure = this.#policy.lastFailure;
        const error = name === 'open' && failure !== undefined && 'value' in failure ? (failure.value as { error?: unknown }).error : undefined;
        onChange(Object.freeze(name === 'open' ? { model, state: name, error } : { model, state: name }));
      });
    }
  }

  /** The breaker's state now. */
  get state(): BreakerState {
    return STATES[this.#policy.state];
  }

  /**
   * Whether a call made now would be let through: closed (and not resting for a `retry-after`), or
   * open with its cool-down over (the call would be the trial).
   */
  get available(): boolean {
    const state = this.#policy.state;
    const now = Date.now();
    return (state === CircuitState.Closed && now >= this.#restUntil) || (state === CircuitState.Open && now >= this.halfOpensAt);
  }

  /** Until when the model rests for a `retry-after` of its last counted failure (epoch ms; in the past when it does not). */
  get restsUntil(): number {
    return this.#restUntil;
  }

  /** When an open breaker lets its trial call through (epoch ms). */
  get halfOpensAt(): number {
    return this.#openedAt + this.#halfOpenAfterMs;
  }

  /**
   * Runs one call of the model through the breaker. `call` resolves with what the model started, or
   * rejects with its error; `counts(error)` says whether that error is a failure of the model.
   */
  async run<T>(call: () => Promise<T>, counts: (error: unknown) => boolean, signal: AbortSignal | undefined, mayRest = true): Promise<CallOutcome<T>> {
    if (this.#policy.state === CircuitState.HalfOpen) return { kind: 'skipped', error: new CircuitOpenError(this.model, 'half-open') };
    if (mayRest && Date.now() < this.#restUntil) return { kind: 'skipped', error: new CircuitOpenError(this.model, 'retry-after', this.#restUntil) };
    const outcome = await this.#run(call, counts, signal);
    if (outcome.kind === 'failed' && outcome.counts) this.#restFor(outcome.error);
    else if (outcome.kind === 'started') this.#restUntil = 0;
    return outcome;
  }

  /** A counted failure with a `retry-after` (an `APIStatusError`'s, or an aggregate's of a nested chain): the model rests that long, at most `maxRetryAfterMs`. */
  #restFor(error: unknown): void {
    const seconds = (error as { retryAfterSeconds?: unknown } | null)?.retryAfterSeconds;
    if (typeof seconds !== 'number' || !(seconds > 0) || this.#maxRetryAfterMs === 0) return;
    this.#restUntil = Math.max(this.#restUntil, Date.now() + Math.min(seconds * 1_000, this.#maxRetryAfterMs));
  }

  async #run<T>(call: () => Promise<T>, counts: (error: unknown) => boolean, signal: AbortSignal | undefined): Promise<CallOutcome<T>> {
    try {
      return await this.#policy.execute(async (): Promise<CallOutcome<T>> => {
        try {
          return { kind: 'started', value: await call() };
        } catch (error) {
          // An aborted trial call proves nothing: the breaker opens again rather than closing.
          if (signal?.aborted) {
            if (this.#policy.state === CircuitState.HalfOpen) return { kind: 'failed', error, counts: true };
            throw new Uncounted(error);
          }
          if (counts(error)) return { kind: 'failed', error, counts: true };
          throw new Uncounted(error);
        }
      }, signal);
    } catch (error) {
      if (error instanceof Uncounted) return { kind: 'failed', error: error.error, counts: false };
      if (isIsolatedCircuitError(error)) return { kind: 'skipped', error: new CircuitOpenError(this.model, 'isolated') };
      if (isBrokenCircuitError(error)) return { kind: 'skipped', error: new CircuitOpenError(this.model, 'open', this.halfOpensAt) };
      throw error;
    }
  }

  /** Holds the breaker open until the handle is disposed (cockatiel's `isolate`): the model is skipped meanwhile. */
  isolate(): { dispose(): void } {
    return this.#policy.isolate();
  }
}

const STATES: Readonly<Record<CircuitState, BreakerState>> = {
  [CircuitState.Closed]: 'closed',
  [CircuitState.Open]: 'open',
  [CircuitState.HalfOpen]: 'half-open',
  [CircuitState.Isolated]: 'isolated',
};
