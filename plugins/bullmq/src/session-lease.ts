import type { Redis } from 'ioredis';
import { ACQUIRE_SCRIPT, CLAIM_SCRIPT, RELEASE_SCRIPT, RENEW_SCRIPT } from './scripts.js';
import type { SessionKeys } from './keys.js';

/** What a writer read of a session: checked by {@link SessionLease.claim}. */
export interface SessionSnapshot {
  readonly historyLength: number;
  /** The id of the step waiting for approval, if one does. */
  readonly pendingStepId: string | undefined;
  /** Records in the call ledger. */
  readonly ledgerLength: number;
}

/**
 * The right to write to one session, with a fencing token: a number that only grows, handed out
 * with each lease. Every write checks, inside Redis, that the session's lease still carries this
 * token — so a worker whose lease expired (it froze, or lost Redis for too long) cannot write any
 * more, even if it wakes up believing it still may. Renewed every third of its time to live.
 */
export class SessionLease {
  #timer: NodeJS.Timeout | undefined;
  #lost = false;
  #renewedAt = Date.now();

  private constructor(
    private readonly redis: Redis,
    private readonly keys: SessionKeys,
    /** The fencing token. */
    readonly token: number,
    private readonly ttlMs: number,
    private readonly onLost: () => void,
  ) {}

  /** Takes the lease if nobody holds it (else `undefined`), and keeps renewing it. `onLost` runs once, if renewal fails. */
  static async acquire(redis: Redis, keys: SessionKeys, ttlMs: number, onLost: () => void): Promise<SessionLease | undefined> {
    const token = Number(await redis.eval(ACQUIRE_SCRIPT, 2, keys.owner, keys.fence, ttlMs));
    if (token === 0) return undefined;
    const lease = new SessionLease(redis, keys, token, ttlMs, onLost);
    lease.#schedule();
    return lease;
  }

  /**
   * Takes the lease like {@link SessionLease.acquire}, for a writer whose copy of the session is the
   * stored one (`expected`: what it read), in one script. Returns `'held'` when someone holds the
   * lease, `'changed'` when the session is not what the writer read (someone wrote to it since).
   */
  static async claim(redis: Redis, keys: SessionKeys, ttlMs: number, expected: SessionSnapshot, onLost: () => void): Promise<SessionLease | 'held' | 'changed'> {
    const token = Number(
      await redis.eval(CLAIM_SCRIPT, 5, keys.owner, keys.fence, keys.history, keys.meta, keys.ledger, ttlMs, expected.historyLength, expected.pendingStepId ?? '', expected.ledgerLength),
    );
    if (token === 0) return 'held';
    if (token < 0) return 'changed';
    const lease = new SessionLease(redis, keys, token, ttlMs, onLost);
    lease.#schedule();
    return lease;
  }

  /** Whether renewal failed (the lease expired or was taken). */
  get lost(): boolean {
    return this.#lost;
  }

  #schedule(): void {
    this.#timer = setTimeout(() => void this.#renew(), Math.max(10, Math.floor(this.ttlMs / 3)));
    this.#timer.unref();
  }

  async #renew(): Promise<void> {
    let renewed: boolean;
    const attemptAt = Date.now();
    try {
      renewed = Number(await this.redis.eval(RENEW_SCRIPT, 1, this.keys.owner, this.token, this.ttlMs)) === 1;
      if (renewed) this.#renewedAt = attemptAt;
    } catch {
      // Redis unreachable: keep trying until the lease would have expired anyway
      renewed = Date.now() - this.#renewedAt < this.ttlMs;
    }
    if (this.#timer === undefined) return; // released meanwhile
    if (renewed) return this.#schedule();
    this.#lost = true;
    this.#timer = undefined;
    this.onLost();
  }

  /** Stops renewing and drops the lease (if still ours). Never throws. */
  async release(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    try {
      await this.redis.eval(RELEASE_SCRIPT, 1, this.keys.owner, this.token);
    } catch {
      // it expires on its own
    }
  }
}
