/**
 * The usage ledger in Redis: every worker's steps in one set of totals per tenant, provider, model
 * and UTC day.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { DAY_MS, PACE_WINDOW_SECONDS, checkQuery, queryDays, usageRows, type UsageBucket, type UsageLedger, type UsageQuery, type UsageRecord, type UsageRow } from '@kosong/core/kernel';
import type { Redis } from 'ioredis';
import { asUnavailable, closeRedis, createRedis, type RedisConnection } from '../connection.js';
import { DEFAULT_PREFIX } from '../keys.js';
import { checkKnownOptions, type KnownOptions } from '../options.js';
import { GovernanceKeys } from './governance-keys.js';
import { STEP_END_SCRIPT } from './governance-scripts.js';

/** Options of a {@link RedisUsageLedger}. */
export interface RedisUsageLedgerOptions {
  /** How to reach Redis (a client of yours is duplicated, never closed here). */
  readonly connection: RedisConnection;
  /** Prefix of every Redis key (default `kosong`). */
  readonly prefix?: string;
  /**
   * How long a record waits for Redis to come back, or a frozen Redis to answer, before it fails
   * (default 15 s, the package's `DEFAULT_RECONNECT_WINDOW_MS`): a record sent before Redis went
   * away is applied once it is back.
   */
  readonly reconnectWindowMs?: number;
}

const LEDGER_OPTIONS: KnownOptions<RedisUsageLedgerOptions> = { connection: true, prefix: true, reconnectWindowMs: true };

/** The client of a ledger, with its script. */
type LedgerRedis = Redis & {
  kosongStepEnd(bucket: string, index: string, spend: string, writers: string, holders: string, tokens: string, callHolders: string, ...args: (string | number)[]): Promise<number>;
};

/**
 * What the end of a step admitted by `RedisGovernance` gives back: sent with the step's record
 * (the next one of its tenant in the same tick), or alone right after. @internal
 */
export interface StepEnd {
  readonly tenant: string;
  /** The step cap's holders and the place to give back (`undefined`: none). */
  readonly holders: string;
  readonly holder: string | undefined;
  /** The tokens window, and the tokens to count more there (negative: fewer; 0: none). */
  readonly tokens: string;
  readonly tokenDelta: number;
  /** The tool-call cap's holders and the places taken for the step's calls to give back (none: `[]`). */
  readonly callHolders: string;
  readonly calls: readonly string[];
}

/** The fields of a bucket's hash. */
const BUCKET_FIELDS = ['steps', 'inputOther', 'output', 'inputCacheRead', 'inputCacheCreation', 'knownCostUsd', 'unknownCostSteps'] as const;

/**
 * core's `UsageLedger` in Redis, shared by every worker (give it to each worker's kernel as
 * `KernelOptions.usageLedger`, or through `RedisGovernance.kernelOptions`). One hash per tenant,
 * provider, model and UTC day holds the sums of its steps' `TokenUsage` (integers, exact), the
 * cost of those with a price and the count of those without; a hash per tenant holds its known
 * spend per day, which budgets read.
 *
 * - `record` is one script call (one round trip, all or nothing), resolved once Redis applied it
 *   (made by a `RedisGovernance`, it also carries the give-back of the step's place and its token
 *   correction):
 *   a record whose promise resolved is in Redis (with AOF `appendfsync always`, also after Redis
 *   restarts). A record resent after a reconnection is applied once (each write is numbered per
 *   ledger object). A record that fails rejects with a `RedisUnavailableError` (the kernel reports
 *   it to its `HookErrorSink`, as plugin `kosong.usage`); it may or may not have been applied.
 * - `query` reads the index of buckets and the buckets it selects (two round trips);
 *   `spentUsd` one hash (one round trip).
 */
export class RedisUsageLedger implements UsageLedger {
  readonly #redis: LedgerRedis;
  readonly #keys: GovernanceKeys;
  /** This ledger's id among writers, and the number of its last write. */
  readonly #writer = randomUUID();
  #writes = 0;
  /** Whether the client is shared (a `RedisGovernance`'s, closed by it). */
  readonly #shared: boolean;
  /** Ends of steps waiting for their record (see {@link RedisUsageLedger.endStep}). */
  #ends: StepEnd[] = [];

  /**
   * @param client internal: the client of the `RedisGovernance` that makes this ledger (its
   * admissions and the records go over one connection, in order); never closed here.
   * @throws TypeError for an option it does not know.
   */
  constructor(options: RedisUsageLedgerOptions, client?: Redis) {
    checkKnownOptions('RedisUsageLedger', options, LEDGER_OPTIONS);
    this.#keys = new GovernanceKeys(options.prefix ?? DEFAULT_PREFIX);
    this.#shared = client !== undefined;
    const redis =
      client ??
      createRedis(options.connection, {
        blocking: false,
        name: 'kosong-usage-ledger',
        ...(options.reconnectWindowMs === undefined ? {} : { reconnectWindowMs: options.reconnectWindowMs }),
      });
    redis.defineCommand('kosongStepEnd', { numberOfKeys: 7, lua: STEP_END_SCRIPT });
    this.#redis = redis as LedgerRedis;
  }

  /**
   * The end of a step admitted by `RedisGovernance` (its place, its token correction): carried by
   * the next record of its tenant made in this tick — the kernel records a step right after it ends
   * it — in the same script, or sent alone once the tick is over (a step without usage has no
   * record). Never rejects: a place not given back ends with its lease, a correction lost leaves
   * the window counting the estimate. @internal
   */
  endStep(end: StepEnd): void {
    this.#ends.push(end);
    if (this.#ends.length === 1) queueMicrotask(() => this.#sendEnds());
  }

  /** Sends the ends no record carried, each alone. */
  #sendEnds(): void {
    const ends = this.#ends;
    if (ends.length === 0) return;
    this.#ends = [];
    const keys = this.#keys;
    for (const end of ends) {
      this.#redis
        .kosongStepEnd(keys.usageIndex, keys.usageIndex, keys.usageIndex, keys.usageWriters, end.holders, end.tokens, end.callHolders, '', this.#writer, ++this.#writes, 0, 0, 0, 0, '', 0, '0', '0', end.holder ?? '', end.tokenDelta, PACE_WINDOW_SECONDS, ...end.calls)
        .catch(() => undefined);
    }
  }

  /** The end waiting for a record of `tenant`, taken out of the waiting ones (or `undefined`). */
  #endOf(tenant: string | undefined): StepEnd | undefined {
    if (tenant === undefined || this.#ends.length === 0) return undefined;
    const at = this.#ends.findIndex((end) => end.tenant === tenant);
    return at < 0 ? undefined : this.#ends.splice(at, 1)[0];
  }

  /** Records one step (see the class). Rejects with a `RedisUnavailableError` when Redis stays unreachable. */
  async record(record: UsageRecord): Promise<void> {
    const { tenant, provider, model, usage, costUsd, at } = record;
    const day = Math.floor(at / DAY_MS);
    const name = JSON.stringify([tenant ?? null, provider, model, day]);
    const keys = this.#keys;
    const write = ++this.#writes;
    const end = this.#endOf(tenant);
    try {
      await this.#redis.kosongStepEnd(
        keys.usageBucket(name),
        keys.usageIndex,
        keys.usageSpend(tenant ?? ''),
        keys.usageWriters,
        end?.holders ?? keys.usageIndex,
        end?.tokens ?? keys.usageIndex,
        end?.callHolders ?? keys.usageIndex,
        name,
        this.#writer,
        write,
        usage.inputOther,
        usage.output,
        usage.inputCacheRead,
        usage.inputCacheCreation,
        costUsd === undefined ? '' : String(costUsd),
        day,
        tenant === undefined ? '0' : '1',
        '1',
        end?.holder ?? '',
        end?.tokenDelta ?? 0,
        PACE_WINDOW_SECONDS,
        ...(end?.calls ?? []),
      );
    } catch (error) {
      throw asUnavailable(error, `Usage of a step of ${tenant === undefined ? 'no tenant' : `tenant "${tenant}"`} not recorded`);
    }
  }

  /**
   * Totals of the steps matching `query`, as core's `UsageLedger.query`.
   * @throws TypeError for a bad query; `RedisUnavailableError` when Redis stays unreachable.
   */
  async query(query: UsageQuery = {}): Promise<readonly UsageRow[]> {
    checkQuery(query);
    const { from, to } = queryDays(query);
    try {
      const names = await this.#redis.smembers(this.#keys.usageIndex);
      const selected = names
        .map((name) => ({ name, key: JSON.parse(name) as [string | null, string, string, number] }))
        .filter(({ key: [tenant, , , day] }) => (query.tenant === undefined || tenant === query.tenant) && day >= from && day < to);
      if (selected.length === 0) return usageRows(query, []);
      const pipeline = this.#redis.pipeline();
      for (const { name } of selected) pipeline.hmget(this.#keys.usageBucket(name), ...BUCKET_FIELDS);
      const replies = (await pipeline.exec()) ?? [];
      const buckets: UsageBucket[] = selected.map(({ key: [tenant, provider, model, day] }, i) => {
        const [error, values] = replies[i] ?? [new Error('no reply')];
        if (error) throw error;
        const [steps, inputOther, output, inputCacheRead, inputCacheCreation, knownCostUsd, unknownCostSteps] = (values as (string | null)[]).map((v) => Number(v ?? 0));
        return { tenant: tenant ?? undefined, provider, model, day, steps: steps!, inputOther: inputOther!, output: output!, inputCacheRead: inputCacheRead!, inputCacheCreation: inputCacheCreation!, knownCostUsd: knownCostUsd!, unknownCostSteps: unknownCostSteps! };
      });
      return usageRows(query, buckets);
    } catch (error) {
      throw asUnavailable(error, 'Usage not read');
    }
  }

  /** A tenant's known spend from `since` on (whole UTC days), in US dollars: one round trip. */
  async spentUsd(tenant: string, since: number): Promise<number> {
    let spend: Record<string, string>;
    try {
      spend = await this.#redis.hgetall(this.#keys.usageSpend(tenant));
    } catch (error) {
      throw asUnavailable(error, `Tenant "${tenant}": its spend is not readable in Redis`);
    }
    const from = Math.floor(since / DAY_MS);
    let total = 0;
    for (const [day, usd] of Object.entries(spend)) if (Number(day) >= from) total += Number(usd);
    return total;
  }

  /** Closes its Redis client (not one it shares with the `RedisGovernance` that made it). */
  close(): Promise<void> {
    this.#sendEnds();
    return this.#shared ? Promise.resolve() : closeRedis(this.#redis);
  }
}
