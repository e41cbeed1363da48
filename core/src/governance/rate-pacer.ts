/**
 * Pacing per minute (requests or tokens) of one tenant, on a rate-limiter-flexible limiter: its
 * memory store by default, any other store (Redis…) given.
 *
 * @module
 */
import { createRequire } from 'node:module';
import type { RateLimiterAbstract, RateLimiterMemory } from 'rate-limiter-flexible';
import type { Pacer } from './limit-store.js';

/** rate-limiter-flexible's memory limiter, loaded when the first pacer is made (its index loads every store it has). */
let memoryLimiter: typeof RateLimiterMemory | undefined;

function memoryLimiterClass(): typeof RateLimiterMemory {
  if (memoryLimiter === undefined) {
    const require = createRequire(import.meta.url);
    memoryLimiter = require('rate-limiter-flexible/lib/RateLimiterMemory.js') as typeof RateLimiterMemory;
  }
  return memoryLimiter;
}

/** How long a pacing window lasts, in seconds (a limiter given to a {@link RatePacer} must count over it too). */
export const PACE_WINDOW_SECONDS = 60;
const WINDOW_SECONDS = PACE_WINDOW_SECONDS;

/**
 * What a {@link RatePacer} uses of a rate-limiter-flexible limiter (`RateLimiterMemory`,
 * `RateLimiterRedis`, …): its points (settable), `consume`, `reward`, `penalty` and `get`. A
 * refused `consume` rejects with the limiter's `RateLimiterRes`; any other rejection is the store's
 * error, and reaches the caller of the pacer as it is.
 */
export type PaceLimiter = Pick<RateLimiterAbstract, 'points' | 'consume' | 'reward' | 'penalty' | 'get'>;

/** Whether a rejection of `consume` is a refusal (a `RateLimiterRes`, of whichever copy of the package), not a store's error. */
function isRefusal(error: unknown): error is { readonly consumedPoints: number; readonly msBeforeNext: number } {
  if (typeof error !== 'object' || error === null || error instanceof Error) return false;
  const res = error as { consumedPoints?: unknown; msBeforeNext?: unknown };
  return typeof res.consumedPoints === 'number' && typeof res.msBeforeNext === 'number';
}

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
 * the previous one closed), counted by a rate-limiter-flexible limiter under `key`: a
 * `RateLimiterMemory` of its own unless one is given (e.g. a `RateLimiterRedis` with a 60 s
 * duration, shared by processes). Takers of this pacer queue in arrival order: only the first one
 * waiting retries, so a later small request cannot overtake an earlier large one.
 */
export class RatePacer implements Pacer {
  readonly #limiter: PaceLimiter;
  /** The end of the queue of takers: each waits for the one before it (which may reject, if its signal aborted). */
  #tail: Promise<unknown> = Promise.resolve();
  #queued = 0;

  /** @param limiter counts the points (its `points` set to `max`); default a new `RateLimiterMemory` over {@link PACE_WINDOW_SECONDS}. */
  constructor(
    max: number,
    private readonly key: string,
    limiter?: PaceLimiter,
  ) {
    if (limiter === undefined) {
      this.#limiter = new (memoryLimiterClass())({ points: max, duration: WINDOW_SECONDS });
    } else {
      limiter.points = max;
      this.#limiter = limiter;
    }
  }

  get max(): number {
    return this.#limiter.points;
  }

  /** How many takes of this pacer are in line now (waiting, or trying first). */
  get waiting(): number {
    return this.#queued;
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
  take(points: number, signal: AbortSignal | undefined, closing: AbortSignal | undefined, wait: boolean, maxWaitMs: number): Promise<PaceRefusal | undefined> {
    const taking = Math.min(Math.max(0, Math.ceil(points)), this.max);
    if (this.#queued > 0 || signal?.aborted === true || closing?.aborted === true) return this.#takeInLine(taking, signal, closing, wait, maxWaitMs);
    // Nobody ahead: one attempt, and the line only if it is refused. Later takers wait for this one (the tail).
    this.#queued++;
    const attempt = this.#limiter.consume(this.key, taking).then(
      () => {
        this.#queued--;
        return undefined;
      },
      (error: unknown) => this.#refused(error, taking, signal, closing, wait, Date.now() + maxWaitMs),
    );
    this.#tail = attempt;
    return attempt;
  }

  /** A take behind others: waits for the one before it, then tries (and waits) as the first in line. */
  async #takeInLine(taking: number, signal: AbortSignal | undefined, closing: AbortSignal | undefined, wait: boolean, maxWaitMs: number): Promise<PaceRefusal | undefined> {
    const before = this.#tail;
    let done!: () => void;
    this.#tail = new Promise<void>((resolve) => (done = resolve));
    this.#queued++;
    const deadline = Date.now() + maxWaitMs;
    try {
      try {
        await before;
      } catch {
        // the one before gave up (its signal aborted): our turn
      }
      return await this.#inTurn(taking, signal, closing, wait, deadline);
    } finally {
      this.#queued--;
      done();
    }
  }

  /** The first attempt of a take with nobody ahead was refused: it waits (as the first in line) or gives up. */
  async #refused(error: unknown, taking: number, signal: AbortSignal | undefined, closing: AbortSignal | undefined, wait: boolean, deadline: number): Promise<PaceRefusal | undefined> {
    try {
      const refusal = await this.#refusal(error, taking);
      if (!wait || refusal.retryAfterMs > deadline - Date.now()) return refusal;
      await delay(refusal.retryAfterMs, signal, closing);
      return await this.#inTurn(taking, signal, closing, wait, deadline);
    } finally {
      this.#queued--;
    }
  }

  /** Tries until taken, refused for good, or aborted, as the first in line. */
  async #inTurn(taking: number, signal: AbortSignal | undefined, closing: AbortSignal | undefined, wait: boolean, deadline: number): Promise<PaceRefusal | undefined> {
    for (;;) {
      if (signal?.aborted) throw signal.reason;
      if (closing?.aborted) throw closing.reason;
      const refusal = await this.#tryTake(taking);
      if (refusal === undefined) return undefined;
      if (!wait || refusal.retryAfterMs > deadline - Date.now()) return refusal;
      await delay(refusal.retryAfterMs, signal, closing);
    }
  }

  /** One attempt: the refused points are given back, so the window counts only what passed. */
  async #tryTake(points: number): Promise<PaceRefusal | undefined> {
    try {
      await this.#limiter.consume(this.key, points);
      return undefined;
    } catch (error) {
      return this.#refusal(error, points);
    }
  }

  /**
   * What a refused consume says (its points given back); anything but a refusal is thrown. With a
   * limiter shared by processes, the count can also hold the points of other processes' refused
   * takes that were not given back yet.
   */
  async #refusal(error: unknown, points: number): Promise<PaceRefusal> {
    if (!isRefusal(error)) throw error;
    await this.#limiter.reward(this.key, points);
    return { current: Math.max(0, error.consumedPoints - points), retryAfterMs: Math.max(1, error.msBeforeNext), reason: 'refused' };
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
