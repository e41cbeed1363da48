/**
 * Pacing per minute (requests or tokens) of one tenant, on rate-limiter-flexible's memory store.
 *
 * @module
 */
import { createRequire } from 'node:module';
import type { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';

/** rate-limiter-flexible's memory limiter, loaded when the first pacer is made (its index loads every store it has). */
let limiterModule: { readonly RateLimiterMemory: typeof RateLimiterMemory; readonly RateLimiterRes: typeof RateLimiterRes } | undefined;

function limiterClasses(): NonNullable<typeof limiterModule> {
  if (limiterModule === undefined) {
    const require = createRequire(import.meta.url);
    limiterModule = {
      RateLimiterMemory: require('rate-limiter-flexible/lib/RateLimiterMemory.js') as typeof RateLimiterMemory,
      RateLimiterRes: require('rate-limiter-flexible/lib/RateLimiterRes.js') as typeof RateLimiterRes,
    };
  }
  return limiterModule;
}

/** How long a pacing window lasts, in seconds. */
const WINDOW_SECONDS = 60;

/** Why a take was refused: what the window holds and when it closes. */
export interface PaceRefusal {
  /** Points counted in the current window (without the refused request's). */
  readonly current: number;
  /** Milliseconds until the window closes. */
  readonly retryAfterMs: number;
  /** `'refused'`: not waited for (policy, or longer than the wait allowed); `'timeout'`: cannot happen here, kept for the error's shape. */
  readonly reason: 'refused';
}

/**
 * At most `max` points per fixed one-minute window (the window opens with the first take after
 * the previous one closed), counted by a `RateLimiterMemory` of rate-limiter-flexible under the
 * tenant's id. Takers queue in arrival order: only the first one waiting retries, so a later
 * small request cannot overtake an earlier large one. @internal
 */
export class RatePacer {
  readonly #limiter: RateLimiterMemory;
  /** The end of the queue of takers: each waits for the one before it. */
  #tail: Promise<void> = Promise.resolve();
  #queued = 0;

  constructor(
    max: number,
    private readonly key: string,
  ) {
    this.#limiter = new (limiterClasses().RateLimiterMemory)({ points: max, duration: WINDOW_SECONDS });
  }

  get max(): number {
    return this.#limiter.points;
  }

  /** Changes the limit; the current window's count is kept (it applies from the next take on). */
  setMax(max: number): void {
    this.#limiter.points = max;
  }

  /**
   * Takes `points` (clamped to the limit, so that a request larger than a whole minute's worth can
   * still pass in an empty window). Waits while the window is full — as long as `signal` has not
   * aborted and the wait stays within `maxWaitMs` of now — or, with `wait: false`, refuses at once.
   * `closing` (the tenant removed) ends a wait like `signal`.
   *
   * @returns `undefined` once taken, or a {@link PaceRefusal}; rejects with the reason of the signal that aborted.
   */
  async take(points: number, signal: AbortSignal | undefined, closing: AbortSignal | undefined, wait: boolean, maxWaitMs: number): Promise<PaceRefusal | undefined> {
    const taking = Math.min(Math.max(0, Math.ceil(points)), this.max);
    const before = this.#tail;
    let done!: () => void;
    this.#tail = new Promise<void>((resolve) => (done = resolve));
    this.#queued++;
    const deadline = Date.now() + maxWaitMs;
    try {
      if (this.#queued > 1) await before;
      for (;;) {
        if (signal?.aborted) throw signal.reason;
        if (closing?.aborted) throw closing.reason;
        const refusal = await this.#tryTake(taking);
        if (refusal === undefined) return undefined;
        const left = deadline - Date.now();
        if (!wait || refusal.retryAfterMs > left) return refusal;
        await delay(refusal.retryAfterMs, signal, closing);
      }
    } finally {
      this.#queued--;
      done();
    }
  }

  /** One attempt: the refused points are given back, so the window counts only what passed. */
  async #tryTake(points: number): Promise<PaceRefusal | undefined> {
    try {
      await this.#limiter.consume(this.key, points);
      return undefined;
    } catch (error) {
      if (!(error instanceof limiterClasses().RateLimiterRes)) throw error;
      await this.#limiter.reward(this.key, points);
      return { current: Math.max(0, error.consumedPoints - points), retryAfterMs: Math.max(1, error.msBeforeNext), reason: 'refused' };
    }
  }

  /** Counts `points` more (a step used more tokens than estimated), or gives back `-points`. */
  async adjust(points: number): Promise<void> {
    if (points > 0) {
      await this.#limiter.penalty(this.key, points);
    } else if (points < 0) {
      // Only within the window that counted them: giving back to a window that closed would open a
      // new one below zero (more room than the limit).
      const counted = (await this.#limiter.get(this.key))?.consumedPoints ?? 0;
      const back = Math.min(-points, counted);
      if (back > 0) await this.#limiter.reward(this.key, back);
    }
  }

  /** Gives back points taken by a request that was not made after all. */
  refund(points: number): Promise<void> {
    return this.adjust(-Math.min(Math.max(0, Math.ceil(points)), this.max));
  }

  /** What the current window holds. */
  async current(): Promise<number> {
    const res = await this.#limiter.get(this.key);
    return res?.consumedPoints ?? 0;
  }
}

/**
 * Resolves after `ms`, or rejects with the reason of whichever signal aborts first (without a
 * signal combining them: `AbortSignal.any` over a long-lived signal keeps a reference per call).
 */
function delay(ms: number, a: AbortSignal | undefined, b: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = (event: Event): void => {
      clearTimeout(timer);
      a?.removeEventListener('abort', onAbort);
      b?.removeEventListener('abort', onAbort);
      reject((event.target as AbortSignal).reason as unknown);
    };
    const timer = setTimeout(() => {
      a?.removeEventListener('abort', onAbort);
      b?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    a?.addEventListener('abort', onAbort, { once: true });
    b?.addEventListener('abort', onAbort, { once: true });
  });
}
