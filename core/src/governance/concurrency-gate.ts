/**
 * A concurrency cap with a FIFO queue: one per tenant and kind (steps, tool calls), so that one
 * tenant's queue never delays another's.
 *
 * @module
 */
import type { CapGate } from './limit-store.js';

/** One queued acquirer (also the listener of its signal's abort event). */
interface Waiter {
  handleEvent(): void;
  resolve(): void;
  reject(error: unknown): void;
  readonly signal: AbortSignal | undefined;
  timer: ReturnType<typeof setTimeout> | undefined;
  done: boolean;
}

/**
 * At most `cap` holders at once (no cap: `undefined`); acquirers over it queue in arrival order.
 * A queued acquirer whose signal aborts leaves the queue at once (its place goes to the next one)
 * and rejects with the signal's reason; one that waits longer than its deadline rejects with the
 * error its caller made. The fast path (room, nobody queued) is {@link ConcurrencyGate.tryAcquire}:
 * no promise, no allocation. @internal
 */
export class ConcurrencyGate implements CapGate {
  #cap: number | undefined;
  #active = 0;
  #queue: Waiter[] = [];
  #head = 0;
  #waiting = 0;
  #closed: unknown;

  constructor(cap: number | undefined) {
    this.#cap = cap;
  }

  /** How many hold a place now. */
  get active(): number {
    return this.#active;
  }

  /** How many wait in the queue. */
  get waiting(): number {
    return this.#waiting;
  }

  get cap(): number | undefined {
    return this.#cap;
  }

  /** Changes the cap; queued acquirers are let in at once if the new cap has room (in order). */
  setCap(cap: number | undefined): void {
    this.#cap = cap;
    this.#drain();
  }

  /** Takes a place if there is room and nobody waits (then returns `true`), else does nothing. */
  tryAcquire(): boolean {
    if (this.#waiting > 0 || (this.#cap !== undefined && this.#active >= this.#cap)) return false;
    this.#active++;
    return true;
  }

  /**
   * Waits in the queue for a place. Rejects with the signal's reason if it aborts first (at once
   * if it already has), with `timeout()` if `maxWaitMs` passes first, with the close reason if the
   * gate is closed.
   */
  acquire(signal: AbortSignal | undefined, maxWaitMs: number, timeout: () => Error): Promise<void> {
    if (this.#closed !== undefined) return Promise.reject(this.#closed);
    if (signal?.aborted) return Promise.reject(signal.reason as unknown);
    if (this.tryAcquire()) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        signal,
        timer: undefined,
        done: false,
        handleEvent: () => this.#leave(waiter, signal!.reason),
      };
      waiter.timer = setTimeout(() => this.#leave(waiter, timeout()), maxWaitMs);
      signal?.addEventListener('abort', waiter, { once: true });
      this.#queue.push(waiter);
      this.#waiting++;
    });
  }

  /** Gives a place back: the first one queued gets it. */
  release(): void {
    this.#active--;
    this.#drain();
  }

  /** Rejects every queued acquirer (and every later one) with `reason`. */
  close(reason: unknown): void {
    this.#closed = reason;
    for (let i = this.#head; i < this.#queue.length; i++) this.#leave(this.#queue[i]!, reason);
    this.#queue = [];
    this.#head = 0;
  }

  #leave(waiter: Waiter, error: unknown): void {
    if (waiter.done) return;
    this.#settle(waiter);
    waiter.reject(error);
    this.#drain(); // the head of the queue may have left
  }

  #settle(waiter: Waiter): void {
    waiter.done = true;
    this.#waiting--;
    clearTimeout(waiter.timer);
    waiter.signal?.removeEventListener('abort', waiter);
  }

  #drain(): void {
    const queue = this.#queue;
    if (queue.length === 0) return; // nobody queued (the common case): not even the length is written
    while (this.#head < queue.length && (this.#cap === undefined || this.#active < this.#cap)) {
      const waiter = queue[this.#head++]! as Waiter;
      if (waiter.done) continue;
      this.#settle(waiter);
      this.#active++;
      waiter.resolve();
    }
    if (this.#head === queue.length) {
      queue.length = 0;
      this.#head = 0;
    } else if (this.#head > 1024 && this.#head * 2 > queue.length) {
      this.#queue = queue.slice(this.#head);
      this.#head = 0;
    }
  }
}
