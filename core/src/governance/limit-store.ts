/**
 * Where tenant limits are counted: the seam between the governor (which decides) and the store of
 * its counts (this process, by default; a store shared by processes, such as `@kosong/bullmq`'s
 * `RedisGovernance`, to hold the same limits across workers).
 *
 * @module
 */
import type { PaceRefusal } from './rate-pacer.js';
import type { TenantLimits } from './tenant-limits.js';
import type { UsageLedger } from './usage-ledger.js';

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
 * Every limit a step is held to before its request, asked of a store at once
 * ({@link LimitStore.admitStep}). The gate and pacers are the store's own (made by its `capGate`
 * and `pacer`).
 */
export interface StepAsk {
  readonly tenant: string;
  /** The gate to take a place of (the tenant's steps), if it has one. */
  readonly steps: CapGate | undefined;
  /**
   * The gate of the tenant's tool calls, if it has one: a store may take places of it for the
   * step's calls with the admission (given back when the step ends), so that the calls need no
   * round trip of their own. Its places never count as the step's room: the step is admitted
   * whether or not any were free.
   */
  readonly toolCalls: CapGate | undefined;
  /** The pacer to take one request of, if the tenant has `requestsPerMinute`. */
  readonly requests: Pacer | undefined;
  /** The pacer to take {@link StepAsk.tokenPoints} of, if the tenant has `tokensPerMinute`. */
  readonly tokens: Pacer | undefined;
  /** The step's estimated tokens (the store clamps them to the pacer's limit, as `Pacer.take` does). */
  readonly tokenPoints: number;
  /** The budget, if any: the tenant's known spend in `ledger` since `since` (ms) must be below `usd`. */
  readonly budget: { readonly usd: number; readonly since: number; readonly ledger: UsageLedger } | undefined;
  /**
   * The version of the tenant's shared limits ({@link LimitStore.sharedLimits}) the step is admitted
   * under (0: none seen). A store that shares limits refuses to admit under another version: it
   * answers `undefined` once it knows the current one, and the governor admits again under it.
   */
  readonly limitsVersion: number;
}

/** A tenant's limits as shared through a {@link LimitStore}: the last ones given on any process, with their version (counting up). */
export interface SharedLimits {
  readonly version: number;
  /** As given (checked again by each governor that applies them: bad ones fail its admissions with a TypeError). */
  readonly limits: unknown;
}

/** A step admitted by {@link LimitStore.admitStep}: end it once. */
export interface StepGrant {
  /** The step settled: gives its place back, and counts `tokenDelta` more tokens (fewer if negative) than were taken. */
  end(tokenDelta: number): void;
  /** The step makes no request after all (its signal aborted): gives back its place and its points. */
  withdraw(): void;
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
  /**
   * Optional, for a shared store: admits a step against every limit of `ask` at once (one round
   * trip), taking all of them or none. Resolves `undefined` when one of them has no room now, or
   * the store cannot ask them so (another store's gate, a queue in this process): the governor then
   * admits the step limit by limit, queuing and waiting as its policy says. Rejects when the store
   * cannot count (the step fails with that error).
   */
  admitStep?(ask: StepAsk): Promise<StepGrant | undefined>;
  /**
   * Optional, for a shared store: makes `limits` the tenant's limits on every process of the store,
   * as a new version — the governor calls it when the tenant's limits are set on this process
   * (`tenants.define`, `setLimits`, a default applied), so the last limits given on any process
   * hold on all of them. Never throws (a store that cannot share keeps them local).
   */
  shareLimits?(tenant: string, limits: TenantLimits): void;
  /**
   * Optional, with {@link LimitStore.shareLimits}: the tenant's limits as last shared (as known
   * here now; `undefined`: none). The governor reads them at each admission and applies a newer
   * version before it admits.
   */
  sharedLimits?(tenant: string): SharedLimits | undefined;
}

/**
 * Checks a `KernelOptions.limitStore`.
 * @throws TypeError if it is given and has no `capGate` and `pacer` functions, or an `admitStep` that is no function.
 */
export function checkLimitStore(owner: string, store: unknown): LimitStore | undefined {
  if (store === undefined) return undefined;
  const given = store as Partial<LimitStore> | null;
  if (typeof given?.capGate !== 'function' || typeof given.pacer !== 'function') throw new TypeError(`${owner}: limitStore must be a LimitStore (capGate, pacer)`);
  if (given.admitStep !== undefined && typeof given.admitStep !== 'function') throw new TypeError(`${owner}: limitStore.admitStep must be a function`);
  for (const name of ['shareLimits', 'sharedLimits'] as const) {
    if (given[name] !== undefined && typeof given[name] !== 'function') throw new TypeError(`${owner}: limitStore.${name} must be a function`);
  }
  return store as LimitStore;
}
