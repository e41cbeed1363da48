/**
 * The Redis keys of tenant limits and the usage ledger, in one place. The ledger's keys share the
 * hash tag `{usage}` (its script writes several at once, also on Redis Cluster); each cap is one key.
 *
 * @module
 */
import { encodeName } from '../keys.js';

/** The keys of governance under one prefix. @internal */
export class GovernanceKeys {
  constructor(readonly prefix: string) {}

  /** The holders of a tenant's places (a sorted set: holder id → lease expiry, ms on Redis' clock). */
  capHolders(tenant: string, kind: string): string {
    return `${this.prefix}:gov:cap:{${encodeName(tenant)}}:${kind}`;
  }

  /** Every tenant's shared limits (a hash: tenant → JSON of its limits). */
  get limits(): string {
    return `${this.prefix}:gov:limits`;
  }

  /** The version of each tenant's shared limits (a hash: tenant → version), and the counter of versions. */
  get limitsVersions(): string {
    return `${this.prefix}:gov:limits:v`;
  }

  /** The channel a new version of a tenant's limits is announced on (the message: the tenant). */
  get limitsChannel(): string {
    return `${this.prefix}:gov:limits:changed`;
  }

  /** rate-limiter-flexible's `keyPrefix` of pacing windows (its keys: `<prefix>:<tenant>:<kind>`). */
  get paceKeyPrefix(): string {
    return `${this.prefix}:gov:pace`;
  }

  /** The key of a tenant's pacing window of `kind`, after {@link paceKeyPrefix}. */
  paceKey(tenant: string, kind: string): string {
    return `${encodeName(tenant)}:${kind}`;
  }

  /** The Redis key of a tenant's pacing window of `kind` (rate-limiter-flexible's: its prefix, `:`, its key): an integer of points, expiring with the window. */
  paceWindow(tenant: string, kind: string): string {
    return `${this.paceKeyPrefix}:${this.paceKey(tenant, kind)}`;
  }

  /** Every bucket of the ledger (a set of bucket names: JSON `[tenant|null, provider, model, day]`). */
  get usageIndex(): string {
    return `${this.prefix}:{usage}:index`;
  }

  /** One bucket's totals (a hash: steps, the four token counts, knownCostUsd, unknownCostSteps). */
  usageBucket(name: string): string {
    return `${this.prefix}:{usage}:b:${name}`;
  }

  /** A tenant's known spend per UTC day (a hash: day number → US dollars). */
  usageSpend(tenant: string): string {
    return `${this.prefix}:{usage}:spend:${encodeName(tenant)}`;
  }

  /** The last write applied of each writer (a hash: writer id → its write number), so a resent write is applied once. */
  get usageWriters(): string {
    return `${this.prefix}:{usage}:writers`;
  }
}
