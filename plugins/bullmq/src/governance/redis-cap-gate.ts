/**
 * A tenant's concurrency cap held in Redis: a leased place per holder, shared by every worker.
 *
 * @module
 */
import type { CapGate, CapKind } from '@kosong/core/kernel';
import { asUnavailable } from '../connection.js';

/** What a {@link RedisCapGate} needs of its store. @internal */
export interface CapGateHost {
  /** One attempt at a place: `[1, holders]` taken, `[0, holders]` full. */
  acquire(key: string, holder: string, cap: number): Promise<[number, number]>;
  /** Gives a place back (best effort: a place not given back ends with its lease). */
  release(key: string, holder: string): void;
  /** A new holder id, unique across workers. */
  newHolder(): string;
  /** How long a waiter waits before it looks again for a place freed on another worker (ms). */
  readonly pollMs: number;
  /** The gate holds places (`true`) or none any more (`false`): their leases are renewed meanwhile. */
  track(gate: RedisCapGate, holding: boolean): void;
}

/** One queued acquirer. */
interface Waiter {
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
  readonly signal: AbortSignal | undefined;
  readonly onAbort: () => void;
  timer: ReturnType<typeof setTimeout> | undefined;
  done: boolean;
}

/** The cap of a gate without one (it still counts its holders, so that a cap set again counts them). */
const NO_CAP = Number.MAX_SAFE_INTEGER;

/**
 * At most `cap` holders of a tenant's places at once, over every worker on the Redis: each place is
 * a member of a sorted set, scored with the expiry of its lease (renewed by its worker while it
 * holds it; a worker killed meanwhile loses its places when their leases run out). Acquirers of this
 * process queue in arrival order: the first one tries, and again when a place of this process is
 * given back or the cap changes, else every `pollMs` (a place freed on another worker is seen so).
 * Places of this process are interchangeable: giving one back gives back any of them. @internal
 */
export class RedisCapGate implements CapGate {
  #cap: number | undefined;
  /** Holders across workers, as last seen. */
  #seen = 0;
  /** The ids of this process's places in Redis that a holder uses. */
  readonly #using: string[] = [];
  /**
   * The ids of this process's places in Redis that nobody uses: taken for the calls of running
   * steps with their admission ({@link reserve}), handed out by {@link tryAcquire} without a round
   * trip, given back with the end of those steps ({@link unreserve}).
   */
  readonly #spare: string[] = [];
  /** How many places the running steps of this process took for their calls (the spare pool's size, with the used ones). */
  #reserved = 0;
  /** Places asked for so far (each `tryAcquire` that is not refused for a queue, each `acquire`), and the count at the last end of a step: what a step's calls are estimated from. */
  #taken = 0;
  #takenAtLastEnd = 0;
  /** Places a step is expected to use (from the steps that ended). */
  #perStep = 0;
  /** Counts the cap changes that ended the reservations (see {@link setCap}). */
  #epoch = 0;
  /** Places of this process whose lease ran out while they were held: their release gives nothing back. */
  #lost = 0;
  readonly #queue: Waiter[] = [];
  #pumping = false;
  #wake: (() => void) | undefined;
  #closed: unknown;

  constructor(
    private readonly host: CapGateHost,
    /** The holders' key. */
    readonly key: string,
    readonly tenant: string,
    readonly kind: CapKind,
    cap: number | undefined,
  ) {
    this.#cap = cap;
  }

  get cap(): number | undefined {
    return this.#cap;
  }

  /** Holders across workers, as Redis answered the last attempt of this process. */
  get active(): number {
    return this.#seen;
  }

  get waiting(): number {
    return this.#queue.length;
  }

  /** The ids of the places this process holds, used or spare (for the renewal of their leases). */
  get held(): readonly string[] {
    return this.#spare.length === 0 ? this.#using : [...this.#using, ...this.#spare];
  }

  /** How many places this process holds in Redis (used or spare). */
  get #holdingCount(): number {
    return this.#using.length + this.#spare.length;
  }

  /**
   * Changes the cap. A lower one (or none) ends the reservations of the running steps: the spare
   * places go back to Redis now, and every place used goes back when it is released, so that the
   * new cap counts from the next attempt on.
   */
  setCap(cap: number | undefined): void {
    const lower = cap === undefined || (this.#cap !== undefined && cap < this.#cap);
    this.#cap = cap;
    // A new epoch on every lowering, also with nothing reserved yet: an admission in flight (its places
    // taken in Redis, its reply not handled) then gives its places back instead of keeping them.
    if (lower) this.#epoch++;
    if (lower && (this.#reserved > 0 || this.#spare.length > 0)) {
      this.#reserved = 0;
      for (const holder of this.#spare.splice(0)) {
        this.#seen = Math.max(0, this.#seen - 1);
        this.host.release(this.key, holder);
      }
      if (this.#holdingCount === 0) this.host.track(this, false);
    }
    this.#wake?.();
  }

  /** Changes when the reservations are ended by a lower cap: a step's reservation of another epoch is no longer counted. */
  get epoch(): number {
    return this.#epoch;
  }

  /** A spare place at once (`true`, no round trip), else one attempt in Redis; `false` while this process has waiters. */
  tryAcquire(): boolean | Promise<boolean> {
    if (this.#closed !== undefined) return Promise.reject(this.#closed);
    if (this.#queue.length > 0) return Promise.resolve(false);
    this.#taken++;
    if (this.#takeSpare()) return true;
    return this.#attempt();
  }

  /** Uses a spare place, if there is one. */
  #takeSpare(): boolean {
    const spare = this.#spare.pop();
    if (spare === undefined) return false;
    this.#using.push(spare);
    return true;
  }

  acquire(signal: AbortSignal | undefined, maxWaitMs: number, timeout: () => Error): Promise<void> {
    if (this.#closed !== undefined) return Promise.reject(this.#closed);
    if (signal?.aborted) return Promise.reject(signal.reason as unknown);
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        signal,
        timer: undefined,
        done: false,
        onAbort: () => this.#leave(waiter, signal!.reason),
      };
      waiter.timer = setTimeout(() => this.#leave(waiter, timeout()), maxWaitMs);
      signal?.addEventListener('abort', waiter.onAbort, { once: true });
      this.#queue.push(waiter);
      void this.#pump();
    });
  }

  /**
   * Gives a place back: to the first waiter of this process (no round trip), else to the spare
   * pool while the running steps' reservations want it, else to Redis.
   */
  release(): void {
    if (this.#lost > 0) {
      this.#lost--;
      this.#wake?.();
      return;
    }
    const holder = this.#using.pop();
    if (holder === undefined) return;
    if (this.#reserved > this.#holdingCount) {
      // Still reserved by a running step: the first waiter of this process gets it, else it is spare.
      const head = this.#queue.find((w) => !w.done);
      if (head !== undefined && this.#closed === undefined) {
        this.#using.push(holder);
        this.#settle(head);
        head.resolve();
      } else {
        this.#spare.push(holder);
      }
      return;
    }
    this.#seen = Math.max(0, this.#seen - 1);
    if (this.#holdingCount === 0) this.host.track(this, false);
    this.#wake?.();
    this.host.release(this.key, holder);
  }

  /**
   * How many places a step admitted now should take for its calls: as many as the steps that
   * ended used (at most the cap), none while this process has waiters or the gate has no cap.
   */
  get wanted(): number {
    const cap = this.#cap;
    if (cap === undefined || !this.free) return 0;
    return Math.min(cap, Math.ceil(this.#perStep - 1e-9));
  }

  /** Places taken in Redis for the calls of a step being admitted (`holders`: across workers, with them): spare until used. */
  reserve(ids: readonly string[], holders: number): void {
    if (ids.length === 0) return;
    this.#seen = holders;
    const had = this.#holdingCount;
    this.#spare.push(...ids);
    this.#reserved += ids.length;
    if (had === 0) this.host.track(this, true);
    // A waiter that queued meanwhile gets one at once.
    for (let head = this.#queue.find((w) => !w.done); head !== undefined && this.#takeSpare(); head = this.#queue.find((w) => !w.done)) {
      this.#settle(head);
      head.resolve();
    }
  }

  /**
   * A step that took `count` places for its calls (in `epoch`) ended: returns the spare places that no running
   * step wants any more, for the caller to remove from Redis (with the step's end). Also learns
   * how many places a step uses.
   */
  unreserve(count: number, epoch: number): string[] {
    const sample = this.#taken - this.#takenAtLastEnd;
    this.#takenAtLastEnd = this.#taken;
    // Up at once, down by halves: a tenant whose steps make more calls is seen at its next step.
    this.#perStep = sample >= this.#perStep ? sample : (this.#perStep + sample) / 2;
    if (epoch === this.#epoch) this.#reserved = Math.max(0, this.#reserved - count);
    const excess = Math.min(this.#spare.length, this.#holdingCount - this.#reserved);
    if (excess <= 0) return [];
    const back = this.#spare.splice(this.#spare.length - excess, excess);
    this.#seen = Math.max(0, this.#seen - back.length);
    if (this.#holdingCount === 0) this.host.track(this, false);
    this.#wake?.();
    return back;
  }

  /**
   * A place taken for this gate by another script (a step admitted at once): held, and its lease
   * renewed, from now on. `holders`: the places held across workers with it.
   */
  adopt(holder: string, holders: number): void {
    this.#seen = holders;
    this.#using.push(holder);
    if (this.#holdingCount === 1) this.host.track(this, true);
  }

  /**
   * Gives one place back here as {@link release} does, but leaves it to the caller to remove it
   * from Redis: returns its holder id (`undefined` if its lease had run out, or none was held).
   */
  detach(): string | undefined {
    let holder: string | undefined;
    if (this.#lost > 0) {
      this.#lost--;
    } else {
      holder = this.#using.pop();
      if (holder === undefined) return undefined;
      this.#seen = Math.max(0, this.#seen - 1);
      if (this.#holdingCount === 0) this.host.track(this, false);
    }
    this.#wake?.();
    return holder;
  }

  close(reason: unknown): void {
    this.#closed = reason;
    for (const waiter of [...this.#queue]) this.#leave(waiter, reason);
  }

  /** Places whose lease ran out while held (the renewal found them gone): no longer in Redis. */
  lostPlaces(holders: readonly string[]): void {
    for (const holder of holders) {
      const spare = this.#spare.indexOf(holder);
      if (spare >= 0) {
        this.#spare.splice(spare, 1); // nobody used it: nothing to give back
        continue;
      }
      const at = this.#using.indexOf(holder);
      if (at < 0) continue;
      this.#using.splice(at, 1);
      this.#lost++;
    }
    if (this.#holdingCount === 0) this.host.track(this, false);
  }

  /** Whether this gate can be asked for a place at once now: open, and nobody of this process in its queue. */
  get free(): boolean {
    return this.#closed === undefined && this.#queue.length === 0;
  }

  /** One attempt at a place in Redis. */
  async #attempt(): Promise<boolean> {
    const holder = this.host.newHolder();
    let reply: [number, number];
    try {
      reply = await this.host.acquire(this.key, holder, this.#cap ?? NO_CAP);
    } catch (error) {
      throw asUnavailable(error, `Tenant "${this.tenant}": cannot count its ${this.kind === 'steps' ? 'steps' : 'tool calls'} in Redis`);
    }
    this.#seen = reply[1];
    if (reply[0] !== 1) return false;
    this.#using.push(holder);
    if (this.#holdingCount === 1) this.host.track(this, true);
    return true;
  }

  /** Lets the queue's first waiter try until it has a place or leaves, then the next one. */
  async #pump(): Promise<void> {
    if (this.#pumping) return;
    this.#pumping = true;
    try {
      for (;;) {
        const head = this.#queue.find((w) => !w.done);
        if (head === undefined) return;
        let taken: boolean;
        try {
          taken = await this.#attempt();
        } catch (error) {
          // Redis cannot count: every waiter would fail the same way.
          for (const waiter of [...this.#queue]) this.#leave(waiter, error);
          continue;
        }
        if (head.done) {
          if (taken) this.release(); // it left while its attempt ran
          continue;
        }
        if (taken) {
          this.#settle(head);
          head.resolve();
          continue;
        }
        await this.#nap();
      }
    } finally {
      this.#pumping = false;
    }
  }

  /** Waits `pollMs`, or less if a place of this process is given back, the cap changes or the head leaves. */
  #nap(): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        if (this.#wake === done) this.#wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, this.host.pollMs);
      this.#wake = done;
    });
  }

  #leave(waiter: Waiter, error: unknown): void {
    if (waiter.done) return;
    this.#settle(waiter);
    waiter.reject(error);
    this.#wake?.();
  }

  #settle(waiter: Waiter): void {
    waiter.done = true;
    clearTimeout(waiter.timer);
    waiter.signal?.removeEventListener('abort', waiter.onAbort);
    const at = this.#queue.indexOf(waiter);
    if (at >= 0) this.#queue.splice(at, 1);
  }
}
