/**
 * Tenant limits and the usage ledger in Redis, for every worker's kernel.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { DAY_MS, RatePacer, type CapKind, type LimitStore, type Pacer, type PaceKind, type PaceLimiter, type SharedLimits, type TenantLimits, PACE_WINDOW_SECONDS } from '@kosong/core/kernel';
import type { Redis } from 'ioredis';
import type { RateLimiterRedis } from 'rate-limiter-flexible';
import { asUnavailable, closeRedis, createRedis, type RedisConnection } from '../connection.js';
import { DEFAULT_PREFIX } from '../keys.js';
import { checkKnownOptions, type KnownOptions } from '../options.js';
import { GovernanceKeys } from './governance-keys.js';
import { CAP_ACQUIRE_SCRIPT, CAP_RENEW_SCRIPT, LIMITS_SHARE_SCRIPT, STEP_ADMIT_SCRIPT } from './governance-scripts.js';
import { RedisCapGate, type CapGateHost } from './redis-cap-gate.js';
import { RedisUsageLedger } from './redis-usage-ledger.js';

/** Options of {@link RedisGovernance}. */
export interface RedisGovernanceOptions {
  /** How to reach Redis (a client of yours is duplicated, never closed here). */
  readonly connection: RedisConnection;
  /** Prefix of every Redis key (default `kosong`): the workers that share limits share it. */
  readonly prefix?: string;
  /**
   * How long a place under a cap lasts without renewal, in ms (default 30 000; renewed every third
   * of it while held): the places of a worker killed while it held them come back after this long.
   */
  readonly leaseMs?: number;
  /**
   * How often a step or tool call waiting for a place looks again for one freed on another worker,
   * in ms (default 50). A place given back in this process goes to its first waiter at once.
   */
  readonly pollMs?: number;
  /**
   * How long an admission, a record or a read waits for Redis to come back — or a frozen Redis to
   * answer — before it fails with a `RedisUnavailableError` (default 15 s, `DEFAULT_RECONNECT_WINDOW_MS`).
   */
  readonly reconnectWindowMs?: number;
}

/** What a step asks of {@link RedisGovernance.admitStep} (core's `StepAsk`). */
type StepAsk = Parameters<NonNullable<LimitStore['admitStep']>>[0];
/** A step it admitted (core's `StepGrant`). */
type StepGrant = NonNullable<Awaited<ReturnType<NonNullable<LimitStore['admitStep']>>>>;

/** The cap of a gate without one (it still counts its holders), as the admission script takes it. */
const NO_CAP = String(Number.MAX_SAFE_INTEGER);

const GOVERNANCE_OPTIONS: KnownOptions<RedisGovernanceOptions> = { connection: true, prefix: true, leaseMs: true, pollMs: true, reconnectWindowMs: true };

/** The client of the limits, with its scripts. */
type LimitRedis = Redis & {
  kosongCapAcquire(key: string, holder: string, cap: number, leaseMs: number): Promise<[number, number]>;
  kosongCapRenew(key: string, leaseMs: number, ...holders: string[]): Promise<string[]>;
  kosongStepAdmit(holders: string, requests: string, tokens: string, spend: string, callHolders: string, versions: string, limits: string, ...args: (string | number)[]): Promise<[number, number | string, (number | string)?, (number | string)?]>;
  kosongLimitsShare(versions: string, limits: string, tenant: string, json: string, channel: string): Promise<number>;
};

/** A pacer of this store, with its window's key. */
interface PacerOfStore {
  readonly pacer: RatePacer;
  readonly window: string;
}

/** rate-limiter-flexible's ioredis store, loaded when the first pacer is made (its index loads every store it has). */
let redisLimiter: typeof RateLimiterRedis | undefined;

function redisLimiterClass(): typeof RateLimiterRedis {
  redisLimiter ??= createRequire(import.meta.url)('rate-limiter-flexible/lib/RateLimiterRedis.js') as typeof RateLimiterRedis;
  return redisLimiter;
}

/**
 * Tenant limits and the usage ledger in Redis: give it to the kernel of every worker
 * (`new Kernel({ limits, ...governance.kernelOptions })`) and a tenant's limits hold across all of
 * them together.
 *
 * - a step is admitted against its step cap, its pacing and its budget in one script, all or
 *   nothing ({@link RedisGovernance.admitStep}), and ends in the script that records its usage;
 *   when something has no room, it is admitted limit by limit (queued, waiting) as below;
 * - `requestsPerMinute`, `tokensPerMinute`: one window per tenant and minute, counted in Redis as
 *   rate-limiter-flexible's `RateLimiterRedis` counts it (its `consume` when a step waits);
 * - `maxConcurrentSteps`, `maxConcurrentToolCalls`: a sorted set of holders per tenant, each place
 *   leased ({@link RedisGovernanceOptions.leaseMs}) and renewed by its worker, so that a worker
 *   killed while it held places gives them back when their leases run out; a tenant's waiters queue
 *   in order within each worker, and each tenant has its own key and queue, so one tenant's queue
 *   never delays another's;
 * - tool calls: the admission script also takes, under `maxConcurrentToolCalls`, as many places as
 *   the tenant's last steps on this worker made calls (as many as are free: never a condition of
 *   the admission); the step's calls — and any call of the tenant on this worker meanwhile — use
 *   them without a round trip, and the step's record gives back those left. Such a place is held
 *   from the admission to the end of its step, also while the model streams: other workers' calls
 *   may wait for it meanwhile, the cap is never exceeded. A call with no such place left takes one
 *   with a script of its own (and gives it back with a `ZREM`); a lower cap gives the spare places
 *   back at once;
 * - `budget`: read from the {@link RedisUsageLedger} ({@link RedisGovernance.usageLedger}), which
 *   every worker's steps are recorded in.
 *
 * When Redis cannot be reached past the reconnect window, an admission fails with a
 * `RedisUnavailableError` (the step never reaches its provider), never with a client's own error.
 * Close it ({@link RedisGovernance.close}) after the kernels that use it.
 */
export class RedisGovernance implements LimitStore {
  /** The ledger every step is recorded in, and budgets read from. */
  readonly usageLedger: RedisUsageLedger;
  readonly #redis: LimitRedis;
  readonly #keys: GovernanceKeys;
  readonly #leaseMs: number;
  readonly #host: CapGateHost;
  /** The gates holding places now (their leases are renewed). */
  readonly #holding = new Set<RedisCapGate>();
  readonly #renewal: ReturnType<typeof setInterval>;
  /** The pacers made here, with their windows' keys. */
  readonly #pacers = new WeakMap<Pacer, PacerOfStore>();
  readonly #worker = randomUUID().slice(0, 12);
  /** Every tenant's shared limits as last seen (see {@link RedisGovernance.shareLimits}). */
  readonly #shared = new Map<string, SharedLimits>();
  /** Hears of new versions of tenants' limits. */
  readonly #subscriber: Redis;
  #holders = 0;
  #closed = false;

  /** @throws TypeError for an option it does not know, or a `leaseMs` / `pollMs` that is not a positive integer. */
  constructor(options: RedisGovernanceOptions) {
    checkKnownOptions('RedisGovernance', options, GOVERNANCE_OPTIONS);
    for (const field of ['leaseMs', 'pollMs'] as const) {
      const value = options[field];
      if (value !== undefined && (!Number.isSafeInteger(value) || value < 1)) throw new TypeError(`RedisGovernance: ${field} must be a positive integer of ms`);
    }
    const prefix = options.prefix ?? DEFAULT_PREFIX;
    this.#keys = new GovernanceKeys(prefix);
    this.#leaseMs = options.leaseMs ?? 30_000;
    const window = options.reconnectWindowMs === undefined ? {} : { reconnectWindowMs: options.reconnectWindowMs };
    const redis = createRedis(options.connection, { blocking: false, name: 'kosong-governance', ...window });
    redis.defineCommand('kosongCapAcquire', { numberOfKeys: 1, lua: CAP_ACQUIRE_SCRIPT });
    redis.defineCommand('kosongCapRenew', { numberOfKeys: 1, lua: CAP_RENEW_SCRIPT });
    redis.defineCommand('kosongStepAdmit', { numberOfKeys: 7, lua: STEP_ADMIT_SCRIPT });
    redis.defineCommand('kosongLimitsShare', { numberOfKeys: 2, lua: LIMITS_SHARE_SCRIPT });
    this.#redis = redis as LimitRedis;
    // One client for the limits and the ledger: a step's record, with its give-backs, and the next admission go in order.
    this.usageLedger = new RedisUsageLedger({ connection: options.connection, prefix, ...window }, redis);
    const leaseMs = this.#leaseMs;
    this.#host = {
      acquire: (key, holder, cap) => this.#redis.kosongCapAcquire(key, holder, cap, leaseMs),
      release: (key, holder) => void this.#redis.zrem(key, holder).catch(() => undefined),
      newHolder: () => `${this.#worker}:${++this.#holders}`,
      pollMs: options.pollMs ?? 50,
      track: (gate, holding) => void (holding ? this.#holding.add(gate) : this.#holding.delete(gate)),
    };
    this.#renewal = setInterval(() => void this.#renew(), Math.max(1, Math.floor(leaseMs / 3)));
    this.#renewal.unref();
    this.#subscriber = createRedis(options.connection, { blocking: true, name: 'kosong-governance-limits', ...window });
    this.#subscriber.on('message', (_channel: string, tenant: string) => void this.#refresh(tenant));
    // Subscribed first, then every tenant's current limits read: no version is missed in between.
    void this.#subscriber
      .subscribe(this.#keys.limitsChannel)
      .then(() => this.#loadShared())
      .catch(() => undefined);
  }

  /** Reads every tenant's shared limits. */
  async #loadShared(): Promise<void> {
    const [versions, limits] = await Promise.all([this.#redis.hgetall(this.#keys.limitsVersions), this.#redis.hgetall(this.#keys.limits)]);
    for (const [tenant, version] of Object.entries(versions)) if (tenant !== '') this.#learn(tenant, Number(version), limits[tenant] ?? '');
  }

  /** Reads one tenant's shared limits (a new version was announced). */
  async #refresh(tenant: string): Promise<void> {
    const replies = await this.#redis.multi().hget(this.#keys.limitsVersions, tenant).hget(this.#keys.limits, tenant).exec().catch(() => null);
    const [version, json] = (replies ?? []).map(([error, value]) => (error ? null : value)) as (string | null)[];
    if (typeof version === 'string' && typeof json === 'string') this.#learn(tenant, Number(version), json);
  }

  /** Keeps a version of a tenant's limits if it is newer than the one known (`json`: as stored; not JSON is kept as it is, for the governor to refuse). */
  #learn(tenant: string, version: number, json: string | object): void {
    if (!(version > (this.#shared.get(tenant)?.version ?? 0))) return;
    let limits: unknown = json;
    if (typeof json === 'string') {
      try {
        limits = JSON.parse(json) as unknown;
      } catch {
        limits = json;
      }
    }
    this.#shared.set(tenant, Object.freeze({ version, limits }));
  }

  /**
   * Makes `limits` the tenant's limits on every worker of this Redis (and prefix): a new version,
   * stored in Redis and announced; each worker's governor applies it at its next admission of the
   * tenant (the admission script refuses an admission under an older version, so none is admitted
   * under the old limits once the new ones are in Redis). Called by the kernel's governor whenever
   * the tenant's limits are set on this worker — `tenants.define` at start included: the last limits
   * given on any worker hold on all of them. Best effort: when Redis cannot be reached, the limits
   * hold on this worker only.
   */
  shareLimits(tenant: string, limits: TenantLimits): void {
    if (this.#closed) return;
    const keys = this.#keys;
    this.#redis
      .kosongLimitsShare(keys.limitsVersions, keys.limits, tenant, JSON.stringify(limits), keys.limitsChannel)
      .then((version) => this.#learn(tenant, Number(version), limits))
      .catch(() => undefined);
  }

  /** The tenant's shared limits as last seen here (`undefined`: none). */
  sharedLimits(tenant: string): SharedLimits | undefined {
    return this.#shared.get(tenant);
  }

  /** What a worker's kernel takes (`new Kernel({ ...governance.kernelOptions })`): this store for limits, its ledger for usage. */
  get kernelOptions(): { readonly limitStore: LimitStore; readonly usageLedger: RedisUsageLedger } {
    return { limitStore: this, usageLedger: this.usageLedger };
  }

  /** The gate of a tenant's steps or tool calls in Redis. */
  capGate(tenant: string, kind: CapKind, cap: number | undefined): RedisCapGate {
    return new RedisCapGate(this.#host, this.#keys.capHolders(tenant, kind), tenant, kind, cap);
  }

  /** The pacer of a tenant's requests or tokens, on a `RateLimiterRedis` over one-minute windows. */
  pacer(tenant: string, kind: PaceKind, max: number): Pacer {
    const limiter = new (redisLimiterClass())({ storeClient: this.#redis, points: max, duration: PACE_WINDOW_SECONDS, keyPrefix: this.#keys.paceKeyPrefix });
    const pacer = new RatePacer(max, this.#keys.paceKey(tenant, kind), typedErrors(limiter, `Tenant "${tenant}": cannot count its ${kind} per minute in Redis`));
    this.#pacers.set(pacer, { pacer, window: this.#keys.paceWindow(tenant, kind) });
    return pacer;
  }

  /**
   * Admits a step against its step cap, its pacing and its budget in one script (one round trip),
   * all or nothing; its end ({@link StepGrant.end}) rides on the step's record in the ledger
   * (the same script call). Resolves `undefined` — and sends nothing — when it cannot ask so (a
   * waiter of this process queued first, a budget kept in another ledger), and when something had
   * no room (the kernel then admits the step limit by limit, queuing and waiting as usual).
   * @throws {RedisUnavailableError} when Redis cannot be reached (or answers nothing) within its window.
   */
  async admitStep(ask: StepAsk): Promise<StepGrant | undefined> {
    const { steps, requests, tokens, budget, tenant, toolCalls } = ask;
    const gate = steps === undefined ? undefined : steps instanceof RedisCapGate && steps.free ? steps : null;
    // Places for the step's calls, taken with it when the tenant's steps made calls (the calls need no round trip then).
    const callGate = toolCalls instanceof RedisCapGate && toolCalls.cap !== undefined ? toolCalls : undefined;
    const callsWanted = callGate?.wanted ?? 0;
    const requestPacer = requests === undefined ? undefined : (this.#pacers.get(requests) ?? null);
    const tokenPacer = tokens === undefined ? undefined : (this.#pacers.get(tokens) ?? null);
    if (gate === null || requestPacer === null || tokenPacer === null || requestPacer?.pacer.waiting || tokenPacer?.pacer.waiting) return undefined;
    if (budget !== undefined && budget.ledger !== this.usageLedger) return undefined;
    const holder = gate === undefined ? '' : this.#host.newHolder();
    const tokenPoints = tokenPacer === undefined ? 0 : Math.min(Math.max(0, Math.ceil(ask.tokenPoints)), tokenPacer.pacer.max);
    const keys = this.#keys;
    const requestsWindow = requestPacer?.window ?? keys.paceWindow(tenant, 'requests');
    const tokensWindow = tokenPacer?.window ?? keys.paceWindow(tenant, 'tokens');
    const holders = gate?.key ?? keys.capHolders(tenant, 'steps');
    const callHolders = callGate?.key ?? keys.capHolders(tenant, 'toolCalls');
    const callPrefix = callsWanted > 0 ? this.#host.newHolder() : '';
    const epoch = callGate?.epoch ?? 0;
    let reply: [number, number | string, (number | string)?, (number | string)?];
    try {
      reply = await this.#redis.kosongStepAdmit(
        holders,
        requestsWindow,
        tokensWindow,
        keys.usageSpend(tenant),
        callHolders,
        keys.limitsVersions,
        keys.limits,
        holder,
        gate === undefined ? '' : gate.cap === undefined ? NO_CAP : gate.cap,
        this.#leaseMs,
        requestPacer === undefined ? '' : requestPacer.pacer.max,
        tokenPacer === undefined ? '' : tokenPacer.pacer.max,
        tokenPoints,
        budget === undefined ? '' : String(budget.usd),
        budget === undefined ? 0 : Math.floor(budget.since / DAY_MS),
        PACE_WINDOW_SECONDS,
        callGate?.cap ?? '',
        callsWanted,
        callPrefix,
        tenant,
        ask.limitsVersion,
      );
    } catch (error) {
      throw asUnavailable(error, `Tenant "${tenant}": cannot admit its step in Redis`);
    }
    if (reply[0] !== 1) {
      // Newer limits than the step's: known now, for the governor to admit it under them.
      if (reply[1] === 'limits') this.#learn(tenant, Number(reply[2]), String(reply[3] ?? ''));
      return undefined;
    }
    gate?.adopt(holder, Number(reply[1]));
    const calls = Number(reply[2] ?? 0);
    if (callGate !== undefined && calls > 0 && epoch === callGate.epoch) {
      callGate.reserve(
        Array.from({ length: calls }, (_, i) => `${callPrefix}.${i + 1}`),
        Number(reply[3] ?? 0),
      );
    } else if (calls > 0) {
      // The cap was lowered while the script ran: these places are not this step's to keep.
      for (let i = 1; i <= calls; i++) this.#host.release(callHolders, `${callPrefix}.${i}`);
    }
    const reserved = callGate !== undefined && epoch === callGate.epoch ? calls : 0;
    let ended = false;
    const settle = (tokenDelta: number, record: boolean): void => {
      if (ended) return;
      ended = true;
      const held = gate?.detach();
      const back = callGate?.unreserve(reserved, epoch) ?? [];
      const end = { tenant, holders, holder: held, tokens: tokensWindow, tokenDelta: tokenPacer === undefined ? 0 : Math.round(tokenDelta), callHolders, calls: back };
      if (record) {
        this.usageLedger.endStep(end);
      } else {
        // Not made after all: the request and its tokens go back too (within their windows).
        this.usageLedger.endStep({ ...end, tokenDelta: -tokenPoints });
        if (requestPacer !== undefined) void requestPacer.pacer.refund(1).catch(() => undefined);
      }
    };
    return { end: (tokenDelta) => settle(tokenDelta, true), withdraw: () => settle(0, false) };
  }

  /** Renews the leases of every place held here (one pipeline); places found gone are marked lost. */
  async #renew(): Promise<void> {
    const gates = [...this.#holding].filter((gate) => gate.held.length > 0);
    if (gates.length === 0 || this.#closed) return;
    const pipeline = this.#redis.pipeline();
    for (const gate of gates) (pipeline as unknown as LimitRedis).kosongCapRenew(gate.key, this.#leaseMs, ...gate.held);
    const replies = await pipeline.exec().catch(() => null);
    replies?.forEach(([error, lost], i) => {
      if (!error && Array.isArray(lost) && lost.length > 0) gates[i]!.lostPlaces(lost as string[]);
    });
  }

  /** Stops renewing leases and closes its Redis clients (places still held then end with their leases). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#renewal);
    await this.usageLedger.close();
    await Promise.all([closeRedis(this.#redis), closeRedis(this.#subscriber)]);
  }
}

/** A limiter whose store errors are `RedisUnavailableError`s when Redis cannot be reached (a refusal stays one). */
function typedErrors(limiter: RateLimiterRedis, doing: string): PaceLimiter {
  const typed = <T>(pending: Promise<T>): Promise<T> =>
    pending.catch((error: unknown) => {
      throw error instanceof Error ? asUnavailable(error, doing) : error;
    });
  return {
    get points() {
      return limiter.points;
    },
    set points(points: number) {
      limiter.points = points;
    },
    consume: (key, points, options) => typed(limiter.consume(key, points, options)),
    reward: (key, points, options) => typed(limiter.reward(key, points, options)),
    penalty: (key, points, options) => typed(limiter.penalty(key, points, options)),
    get: (key, options) => typed(limiter.get(key, options)),
  };
}
