/**
 * The usage ledger: each step's token usage and cost, by tenant, provider, model and UTC day.
 *
 * @module
 */
import type { TokenUsage } from '../provider/token-usage.js';

/** One step's usage, as the kernel records it when the step ends. */
export interface UsageRecord {
  /** The step's tenant (`undefined`: a step of the kernel's own scope). */
  readonly tenant: string | undefined;
  /** The `ChatProvider`'s `name`. */
  readonly provider: string;
  /** The `ChatProvider`'s `modelName`. */
  readonly model: string;
  /** The provider's `TokenUsage` of the step. */
  readonly usage: TokenUsage;
  /** Its cost in US dollars; `undefined` when the model has no price (unknown, not 0). */
  readonly costUsd: number | undefined;
  /** When the step ended, in milliseconds since the epoch: its UTC day is the record's day. */
  readonly at: number;
}

/** What {@link UsageQuery.groupBy} can group rows by. */
export type UsageGroupKey = 'tenant' | 'provider' | 'model' | 'day';

/** A query of the ledger. */
export interface UsageQuery {
  /** Only this tenant's steps. (Steps without a tenant are never matched by a tenant.) */
  readonly tenant?: string;
  /** From this time on (a `Date` or milliseconds since the epoch), counted in whole UTC days: the day holding it is included. */
  readonly since?: Date | number;
  /** Before this time, in whole UTC days: the day holding it is included, unless `until` is its midnight. */
  readonly until?: Date | number;
  /** The keys of the rows, in this order; none: one row of totals. */
  readonly groupBy?: readonly UsageGroupKey[];
}

/** One row of a query: totals over the steps of one group. */
export interface UsageRow {
  /** Set when grouped by tenant (`undefined` for steps without a tenant). */
  readonly tenant?: string | undefined;
  readonly provider?: string | undefined;
  readonly model?: string | undefined;
  /** The UTC day, `YYYY-MM-DD`, when grouped by day. */
  readonly day?: string | undefined;
  /** How many steps were recorded. */
  readonly steps: number;
  /** The sum of the steps' `TokenUsage`, field by field (exact: integers). */
  readonly usage: TokenUsage;
  /** The cost of the steps in US dollars, or `undefined` if any of them has no price (see {@link UsageRow.knownCostUsd}). */
  readonly costUsd: number | undefined;
  /** The cost of the steps whose model has a price. */
  readonly knownCostUsd: number;
  /** How many steps have no price: their cost is unknown (never counted as 0). */
  readonly unknownCostSteps: number;
}

/**
 * Where the kernel records each step's usage (`KernelOptions.usageLedger`; default
 * {@link MemoryUsageLedger}) and where budgets read a tenant's spend from. A store shared by several
 * processes (Redis) implements the same interface: every method may answer with a promise.
 */
export interface UsageLedger {
  /**
   * Records one step. May return `undefined` (recorded at once, as the memory ledger does) or a
   * promise; a rejection is reported to the kernel's `HookErrorSink`, never thrown into the step.
   */
  record(record: UsageRecord): void | Promise<void>;
  /** Totals of the steps matching `query`, grouped as it asks. */
  query(query?: UsageQuery): Promise<readonly UsageRow[]>;
  /** A tenant's spend from `since` (milliseconds since the epoch, in whole UTC days) on, in US dollars, of steps with a price. */
  spentUsd(tenant: string, since: number): number | Promise<number>;
}

/** Milliseconds per day. */
export const DAY_MS = 86_400_000;

/** One bucket: a tenant's steps of one provider, model and day. */
interface Bucket {
  steps: number;
  inputOther: number;
  output: number;
  inputCacheRead: number;
  inputCacheCreation: number;
  knownCostUsd: number;
  unknownCostSteps: number;
}

type Buckets = Map<string | undefined, Map<string, Map<string, Map<number, Bucket>>>>;

/**
 * The ledger in memory (this process only; gone when it exits): one bucket per tenant, provider,
 * model and UTC day, so its size grows with those, not with the steps. Recording is synchronous and
 * allocates nothing once a bucket exists; `query` selects whole days.
 */
export class MemoryUsageLedger implements UsageLedger {
  readonly #buckets: Buckets = new Map();
  /** Known spend per tenant and day, for budgets. */
  readonly #spend = new Map<string, Map<number, number>>();
  /** The last bucket recorded in: consecutive steps nearly always share it. */
  #last: { readonly tenant: string | undefined; readonly provider: string; readonly model: string; readonly day: number; readonly bucket: Bucket } | undefined;

  record(record: UsageRecord): undefined {
    this.add(record.tenant, record.provider, record.model, record.usage, record.costUsd, record.at);
    return undefined;
  }

  /** @internal {@link MemoryUsageLedger.record} without the record object (the kernel's path). */
  add(tenant: string | undefined, provider: string, model: string, usage: TokenUsage, costUsd: number | undefined, at: number): void {
    const day = Math.floor(at / DAY_MS);
    const last = this.#last;
    const bucket = last !== undefined && last.tenant === tenant && last.provider === provider && last.model === model && last.day === day ? last.bucket : this.#bucket(tenant, provider, model, day);
    bucket.steps++;
    bucket.inputOther += usage.inputOther;
    bucket.output += usage.output;
    bucket.inputCacheRead += usage.inputCacheRead;
    bucket.inputCacheCreation += usage.inputCacheCreation;
    if (costUsd === undefined) {
      bucket.unknownCostSteps++;
    } else {
      bucket.knownCostUsd += costUsd;
      if (tenant !== undefined && costUsd !== 0) {
        let spend = this.#spend.get(tenant);
        if (spend === undefined) this.#spend.set(tenant, (spend = new Map()));
        spend.set(day, (spend.get(day) ?? 0) + costUsd);
      }
    }
  }

  /** The bucket of a tenant, provider, model and day (made if new), remembered as the last one. */
  #bucket(tenant: string | undefined, provider: string, model: string, day: number): Bucket {
    let providers = this.#buckets.get(tenant);
    if (providers === undefined) this.#buckets.set(tenant, (providers = new Map()));
    let models = providers.get(provider);
    if (models === undefined) providers.set(provider, (models = new Map()));
    let days = models.get(model);
    if (days === undefined) models.set(model, (days = new Map()));
    let bucket = days.get(day);
    if (bucket === undefined) days.set(day, (bucket = { steps: 0, inputOther: 0, output: 0, inputCacheRead: 0, inputCacheCreation: 0, knownCostUsd: 0, unknownCostSteps: 0 }));
    this.#last = { tenant, provider, model, day, bucket };
    return bucket;
  }

  spentUsd(tenant: string, since: number): number {
    const spend = this.#spend.get(tenant);
    if (spend === undefined) return 0;
    const from = Math.floor(since / DAY_MS);
    let total = 0;
    for (const [day, usd] of spend) if (day >= from) total += usd;
    return total;
  }

  query(query: UsageQuery = {}): Promise<readonly UsageRow[]> {
    try {
      return Promise.resolve(this.#query(query));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  #query(query: UsageQuery): UsageRow[] {
    return usageRows(query, this.#entries(query.tenant));
  }

  /** Every bucket (of `tenant` only, if given), with its keys. */
  *#entries(tenant: string | undefined): Generator<UsageBucket> {
    for (const [t, providers] of this.#buckets) {
      if (tenant !== undefined && t !== tenant) continue;
      for (const [provider, models] of providers) {
        for (const [model, days] of models) {
          for (const [day, bucket] of days) yield { tenant: t, provider, model, day, ...bucket };
        }
      }
    }
  }
}

/**
 * One bucket of a ledger: the totals of a tenant's steps of one provider, model and UTC day (for
 * ledgers to share the rows of a query, see {@link usageRows}).
 */
export interface UsageBucket {
  readonly tenant: string | undefined;
  readonly provider: string;
  readonly model: string;
  /** The UTC day, in days since the epoch. */
  readonly day: number;
  readonly steps: number;
  readonly inputOther: number;
  readonly output: number;
  readonly inputCacheRead: number;
  readonly inputCacheCreation: number;
  /** The cost of the steps with a price, in US dollars. */
  readonly knownCostUsd: number;
  /** How many steps had no price. */
  readonly unknownCostSteps: number;
}

/**
 * The UTC days a query selects, in days since the epoch: from `from` (inclusive) to `to`
 * (exclusive); infinite ends when it has no `since` / `until`.
 */
export function queryDays(query: UsageQuery): { readonly from: number; readonly to: number } {
  return {
    from: query.since === undefined ? -Infinity : Math.floor(+query.since / DAY_MS),
    to: query.until === undefined ? Infinity : Math.ceil(+query.until / DAY_MS),
  };
}

/**
 * The rows of `query` over `buckets` (checked first; buckets of other tenants or days are skipped),
 * as {@link UsageLedger.query} answers: grouped by its `groupBy`, sorted by those keys; one row of
 * totals (zeros if nothing matched) without `groupBy`. For ledgers to share.
 *
 * @throws TypeError for a bad query (see {@link checkQuery}).
 */
export function usageRows(query: UsageQuery, buckets: Iterable<UsageBucket>): UsageRow[] {
  const { tenant, groupBy = [] } = checkQuery(query);
  const { from, to } = queryDays(query);
  const rows = new Map<string, { key: Partial<Record<UsageGroupKey, string | undefined>>; bucket: Bucket }>();
  for (const bucket of buckets) {
    if (tenant !== undefined && bucket.tenant !== tenant) continue;
    const { day } = bucket;
    if (day < from || day >= to) continue;
    const values: Record<UsageGroupKey, string | undefined> = { tenant: bucket.tenant, provider: bucket.provider, model: bucket.model, day: dayString(day) };
    const key: Partial<Record<UsageGroupKey, string | undefined>> = {};
    for (const group of groupBy) key[group] = values[group];
    const id = JSON.stringify(groupBy.map((group) => values[group] ?? null));
    let row = rows.get(id);
    if (row === undefined) rows.set(id, (row = { key, bucket: emptyBucket() }));
    addBucket(row.bucket, bucket);
  }
  if (rows.size === 0 && groupBy.length === 0) rows.set('[]', { key: {}, bucket: emptyBucket() });
  const result = [...rows.values()].map(({ key, bucket }) => toRow(key, bucket));
  return result.sort((a, b) => compareRows(a, b, groupBy));
}

function emptyBucket(): Bucket {
  return { steps: 0, inputOther: 0, output: 0, inputCacheRead: 0, inputCacheCreation: 0, knownCostUsd: 0, unknownCostSteps: 0 };
}

const GROUP_KEYS: ReadonlySet<string> = new Set(['tenant', 'provider', 'model', 'day']);
const QUERY_KEYS: ReadonlySet<string> = new Set(['tenant', 'since', 'until', 'groupBy']);

/**
 * Checks a query (for ledgers to share).
 *
 * @throws TypeError for an unknown field, a `tenant` that is not a string, a `since` / `until` that
 * is not a valid `Date` or finite number, or a `groupBy` that is not an array of distinct group keys.
 */
export function checkQuery(query: UsageQuery): UsageQuery {
  if (typeof query !== 'object' || query === null) throw new TypeError('usage.query: the query must be an object');
  for (const key of Object.keys(query)) {
    if (!QUERY_KEYS.has(key)) throw new TypeError(`usage.query: unknown option "${key}" (its options: ${[...QUERY_KEYS].join(', ')})`);
  }
  if (query.tenant !== undefined && typeof query.tenant !== 'string') throw new TypeError('usage.query: tenant must be a string');
  for (const field of ['since', 'until'] as const) {
    const value = query[field];
    if (value !== undefined && !((value instanceof Date || typeof value === 'number') && Number.isFinite(+value))) {
      throw new TypeError(`usage.query: ${field} must be a valid Date or a finite number of milliseconds`);
    }
  }
  const { groupBy } = query;
  if (groupBy !== undefined) {
    if (!Array.isArray(groupBy) || groupBy.some((g) => !GROUP_KEYS.has(g as string)) || new Set(groupBy).size !== groupBy.length) {
      throw new TypeError(`usage.query: groupBy must be an array of distinct keys among ${[...GROUP_KEYS].join(', ')}`);
    }
  }
  return query;
}

function addBucket(to: Bucket, from: Readonly<Bucket>): void {
  to.steps += from.steps;
  to.inputOther += from.inputOther;
  to.output += from.output;
  to.inputCacheRead += from.inputCacheRead;
  to.inputCacheCreation += from.inputCacheCreation;
  to.knownCostUsd += from.knownCostUsd;
  to.unknownCostSteps += from.unknownCostSteps;
}

function toRow(key: Partial<Record<UsageGroupKey, string | undefined>>, bucket: Bucket): UsageRow {
  const { steps, inputOther, output, inputCacheRead, inputCacheCreation, knownCostUsd, unknownCostSteps } = bucket;
  return Object.freeze({
    ...key,
    steps,
    usage: Object.freeze({ inputOther, output, inputCacheRead, inputCacheCreation }),
    costUsd: unknownCostSteps > 0 ? undefined : knownCostUsd,
    knownCostUsd,
    unknownCostSteps,
  });
}

function compareRows(a: UsageRow, b: UsageRow, groupBy: readonly UsageGroupKey[]): number {
  for (const group of groupBy) {
    const x = a[group] ?? '';
    const y = b[group] ?? '';
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/** A UTC day number as `YYYY-MM-DD`. */
function dayString(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

/** The start of the UTC day or month holding `now`, and when it ends (milliseconds since the epoch). */
export function periodOf(per: 'day' | 'month', now: number): { readonly start: number; readonly end: number } {
  if (per === 'day') {
    const start = Math.floor(now / DAY_MS) * DAY_MS;
    return { start, end: start + DAY_MS };
  }
  const date = new Date(now);
  return { start: Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1), end: Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1) };
}
