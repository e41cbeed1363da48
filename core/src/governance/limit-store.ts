/**
 * Where tenant limits are counted: the seam between the governor (which decides) and the store of
 * its counts (this process, by default; a store shared by processes, such as `@kosong/bullmq`'s
 * `RedisGovernance`, to hold the same limits across workers).
 *
 * @module
 */
import type { PaceRefusal } from './rate-pacer.js';

/** What a {@link CapGate} caps: a tenant's steps or its tool calls. */
export type CapKind = 'steps' | 'toolCalls';

/** What a {@link Pacer} paces: a tenant's model requests or its tokens, per minute. */
export type PaceKind = 'requests' | 'tokens';

/**
 * A concurrency cap of one tenant's steps or tool calls. Acquirers over the cap queue in arrival
 * order (within the gate's process); one whose signal aborts leaves the queue. Each tenant and kind
 * has its own gate, so one tenant's queue never delays another's.
 */
export interface CapGate {
  /** The cap (`undefined`: none; the gate still counts what holds a place). */
  readonly cap: number | undefined;
  /** How many hold a place now (a shared store: across processes, as last seen). */
  readonly active: number;
  /** How many wait in this process's queue. */
  readonly waiting: number;
  /** Changes the cap, from the next admission on (queued acquirers are let in if it has room). */
  setCap(cap: number | undefined): void;
  /**
   * Takes a place if there is room and nobody of this gate waits: `true` (taken) or `false`; a
   * store that cannot know synchronously answers with a promise of it (rejected if it cannot count).
   */
  tryAcquire(): boolean | Promise<boolean>;
  /**
   * Waits in the queue for a place. Rejects with the signal's reason if it aborts first, with
   * `timeout()` if `maxWaitMs` passes first, with the close reason once the gate is closed, with the
   * store's error if it cannot count.
   */
  acquire(signal: AbortSignal | undefined, maxWaitMs: number, timeout: () => Error): Promise<void>;
  /** Gives one place back (never throws: a shared store that cannot be reached lets the place expire). */
  release(): void;
  /** Rejects every queued acquirer (and every later one) with `reason`. */
  close(reason: unknown): void;
}

/**
 * A pacing limit of one tenant: at most `max` points (requests or tokens) per one-minute window.
 * `RatePacer` is the implementation, on any rate-limiter-flexible limiter.
 */
export interface Pacer {
  /** The limit, per minute. */
  readonly max: number;
  /** Changes the limit; the current window keeps its count. */
  setMax(max: number): void;
  /**
   * Takes `points`, waiting for room (`wait`) at most `maxWaitMs` and as long as neither signal
   * aborted; resolves `undefined` once taken, or a {@link PaceRefusal}.
   */
  take(points: number, signal: AbortSignal | undefined, closing: AbortSignal | undefined, wait: boolean, maxWaitMs: number): Promise<PaceRefusal | undefined>;
  /** Counts `points` more, or gives back `-points` (within the current window only). */
  adjust(points: number): Promise<void>;
  /** Gives back points taken by a request that was not made after all. */
  refund(points: number): Promise<void>;
}

/**
 * Where a kernel counts its tenants' caps and pacing (`KernelOptions.limitStore`). Without one,
 * each tenant's counts are in memory, in this process only. A shared store makes the same limits
 * hold across every process that uses it: its gates and pacers count in the store, so a tenant's
 * steps on all of them together stay within its caps and rates. The governor asks for a gate or a
 * pacer when a tenant first gets that limit, and keeps it (changing its cap or max later).
 */
export interface LimitStore {
  /** The gate of a tenant's steps or tool calls, with its cap. */
  capGate(tenant: string, kind: CapKind, cap: number | undefined): CapGate;
  /** The pacer of a tenant's requests or tokens per minute, at most `max`. */
  pacer(tenant: string, kind: PaceKind, max: number): Pacer;
}

/**
 * Checks a `KernelOptions.limitStore`.
 * @throws TypeError if it is given and has no `capGate` and `pacer` functions.
 */
export function checkLimitStore(owner: string, store: unknown): LimitStore | undefined {
  if (store === undefined) return undefined;
  const given = store as Partial<LimitStore> | null;
  if (typeof given?.capGate !== 'function' || typeof given.pacer !== 'function') throw new TypeError(`${owner}: limitStore must be a LimitStore (capGate, pacer)`);
  return store as LimitStore;
}
