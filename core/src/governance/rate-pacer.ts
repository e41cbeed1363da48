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

/** A take that needed no wait: one settled promise for all of them. */
const TAKEN: Promise<undefined> = Promise.resolve(undefined);

/** Never use credit closer than this to the end of its window (ms): the limiter's clock read may differ by a little. */
const CREDIT_MARGIN_MS = 5;
/** A prefetch takes at most this share of the room the window has left. */
const PREFETCH_SHARE = 8;
/** …and at most this many times the largest draw seen. */
const PREFETCH_DRAWS = 64;

/**
 * At most `max` points per fixed one-minute window (the window opens with the first take after
 * the previous one closed), counted by a rate-limiter-flexible limiter under `key`: a
 * `RateLimiterMemory` of its own unless one is given (e.g. a `RateLimiterRedis` with a 60 s
 * duration, shared by processes). Takers of this pacer queue in arrival order: only the first one
 * waiting retries, so a later small request cannot overtake an earlier large one.
 *
 * With a limiter of its own (no other taker counts in it), a take that reaches the limiter also
 * takes some points ahead — at most an eighth of the room the window has left, and 64 times the
 * largest take or correction seen — as a credit of this window: later takes and corrections draw
 * on it at once ({@link RatePacer.tryTakeNow}, without a promise), until it runs out or its window
 * closes. What the window counts is what was taken plus the credit left, so a take is refused
 * exactly when it would be without the credit; {@link RatePacer.current} and refusals report the
 * points taken (without the credit).
 */
export class RatePacer implements Pacer {
  readonly #limiter: PaceLimiter;
  /** Whether the limiter is this pacer's own (nobody else counts in it): credit may be taken ahead. */
  readonly #own: boolean;
  /** Points the limiter counted that no take used yet, usable until {@link #creditEnds} (ms). */
  #credit = 0;
  #creditEnds = 0;
  /** The room the window had after the last consume that set the credit (less what was counted since). */
  #room = 0;
  /** The largest take or correction seen (the prefetch is a multiple of it). */
  #draw = 1;
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
      this.#own = true;
    } else {
      limiter.points = max;
      this.#limiter = limiter;
      this.#own = false;
    }
  }

  /** The credit usable now (0 once its window closed). */
  #liveCredit(now: number): number {
    if (this.#credit > 0 && now >= this.#creditEnds) this.#credit = 0;
    return this.#credit;
  }

  /**
   * When the credit of this window ends (ms): the same mark for every take and correction of one
   * window, so a correction can tell whether its take was counted in the current window.
   */
  get windowMark(): number {
    return this.#creditEnds;
  }

  /**
   * Takes `points` (clamped as {@link RatePacer.take} does) from the credit, synchronously: `true`
   * if taken, `false` (nothing taken) when nobody may take so now — takers in line, not enough
   * credit, or its window closed — and {@link RatePacer.take} must be asked.
   */
  tryTakeNow(points: number): boolean {
    if (this.#queued > 0) return false;
    const taking = this.#clamp(points);
    if (taking > this.#liveCredit(Date.now())) return false;
    this.#credit -= taking;
    if (taking > this.#draw) this.#draw = taking;
    return true;
  }

  /**
   * Corrects the count as {@link RatePacer.adjust} does, synchronously when the credit allows it:
   * more points drawn from the credit, fewer (`points` < 0) given back to it if `mark` (the
   * {@link RatePacer.windowMark} at the take) is still the window's. `false` (nothing done) otherwise.
   */
  adjustNow(points: number, mark: number): boolean {
    if (points === 0) return true;
    const now = Date.now();
    const credit = this.#liveCredit(now);
    if (points > 0) {
      if (points > this.#draw) this.#draw = points;
      if (points > credit) return false;
      this.#credit -= points;
      return true;
    }
    if (mark !== this.#creditEnds || now >= this.#creditEnds) return false;
    this.#credit -= points;
    return true;
  }

  #clamp(points: number): number {
    return Math.min(Math.max(0, Math.ceil(points)), this.max);
  }

  /** Points to take ahead with a take of `need` that reaches the limiter (none unless the room left is known to allow it). */
  #prefetch(need: number, now: number): number {
    if (!this.#own || now >= this.#creditEnds) return 0;
    const room = this.#room - need;
    if (room <= 0) return 0;
    return Math.min(Math.floor(room / PREFETCH_SHARE), PREFETCH_DRAWS * this.#draw);
  }

  get max(): number {
    return this.#limiter.points;
  }

  /** How many takes of this pacer are in line now (waiting, or trying first). */
  get waiting(): number {
    return this.#queued;
  }

  /** Changes the limit; the current window's count is kept (it applies from the next take on): a lower one gives the credit back. */
  setMax(max: number): void {
    const before = this.#limiter.points;
    this.#limiter.points = max;
    this.#room += max - before;
    if (max < before && this.#credit > 0) {
      const credit = this.#credit;
      this.#credit = 0;
      void this.#limiter.reward(this.key, credit).catch(() => undefined);
    }
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
    const taking = this.#clamp(points);
    if (this.#queued > 0 || signal?.aborted === true || closing?.aborted === true) return this.#takeInLine(taking, signal, closing, wait, maxWaitMs);
    if (this.tryTakeNow(taking)) return TAKEN;
    // Nobody ahead: one attempt (the credit left, if any, covers part of it; some points taken
    // ahead if the room allows), and the line only if it is refused. Later takers wait for this one (the tail).
    this.#queued++;
    const now = Date.now();
    const need = taking - this.#liveCredit(now);
    const ahead = this.#prefetch(need, now);
    if (taking > this.#draw) this.#draw = taking;
    const attempt = this.#limiter.consume(this.key, need + ahead).then(
      (res) => {
        this.#queued--;
        if (this.#own) {
          this.#credit = ahead;
          this.#creditEnds = Date.now() + res.msBeforeNext - CREDIT_MARGIN_MS;
          this.#room = res.remainingPoints;
        }
        return undefined;
      },
      (error: unknown) => this.#refused(error, need + ahead, taking, signal, closing, wait, Date.now() + maxWaitMs),
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
  async #refused(error: unknown, refused: number, taking: number, signal: AbortSignal | undefined, closing: AbortSignal | undefined, wait: boolean, deadline: number): Promise<PaceRefusal | undefined> {
    try {
      // `refused` points were asked (the credit covered the rest of `taking`); a retry asks for all of `taking`.
      const refusal = await this.#refusal(error, refused);
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
    const credit = this.#liveCredit(Date.now());
    return { current: Math.max(0, error.consumedPoints - points - credit), retryAfterMs: Math.max(1, error.msBeforeNext), reason: 'refused' };
  }

  /** Counts `points` more (a step used more tokens than estimated), or gives back `-points`. */
  async adjust(points: number): Promise<void> {
    if (points > 0) {
      // The credit first (counted already), the rest counted now.
      const credit = this.#liveCredit(Date.now());
      const drawn = Math.min(credit, points);
      this.#credit -= drawn;
      this.#room -= points - drawn;
      if (points > drawn) await this.#limiter.penalty(this.key, points - drawn);
    } else if (points < 0) {
      // Only within the window that counted them: giving back to a window that closed would open a
      // new one below zero (more room than the limit).
      const counted = (await this.#limiter.get(this.key))?.consumedPoints ?? 0;
      const back = Math.min(-points, counted - this.#liveCredit(Date.now()));
      if (back > 0) {
        this.#room += back;
        await this.#limiter.reward(this.key, back);
      }
    }
  }

  /** Gives back points taken by a request that was not made after all. */
  refund(points: number): Promise<void> {
    return this.adjust(-Math.min(Math.max(0, Math.ceil(points)), this.max));
  }

  /** What the current window holds (the points taken: without the credit left). */
  async current(): Promise<number> {
    const res = await this.#limiter.get(this.key);
    return Math.max(0, (res?.consumedPoints ?? 0) - this.#liveCredit(Date.now()));
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
