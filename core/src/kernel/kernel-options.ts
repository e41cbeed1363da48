import type { LimitStore } from '../governance/limit-store.js';
import type { PriceTable } from '../governance/pricing.js';
import type { TenantLimits } from '../governance/tenant-limits.js';
import type { UsageLedger } from '../governance/usage-ledger.js';
import type { StepOptions } from '../runtime/step.js';

/** Options of a {@link Kernel}: defaults for every step it runs, and how long disposal waits. Services may inject them. */
export interface KernelOptions extends Pick<StepOptions, 'dispatch' | 'hookTimeoutMs' | 'cleanupTimeoutMs'> {
  /**
   * How long each deactivation may take when a tenant is removed or the kernel disposed (a
   * `@preDestroy`, a deactivation handler, an `onDispose` callback), in milliseconds; one still
   * running then is reported to the `HookErrorSink` as a timeout and no longer awaited. Default 5000.
   */
  readonly deactivationTimeoutMs?: number;
  /**
   * The limits of every tenant without limits of its own (see `TenantLimits`; changed with
   * `kernel.tenants.setDefaultLimits`). Steps without a tenant are not limited. Bad limits are a
   * `TypeError` from the constructor.
   */
  readonly limits?: TenantLimits;
  /**
   * Where each step's usage and cost is recorded (`kernel.usage`), and where budgets read spend
   * from; default a new `MemoryUsageLedger` (this process only).
   */
  readonly usageLedger?: UsageLedger;
  /**
   * Where tenants' concurrency caps and pacing windows are counted; default in memory (this
   * process only). A store shared by processes (`@kosong/bullmq`'s `RedisGovernance`) holds the
   * same limits across all of them. Not a `LimitStore`: a `TypeError` from the constructor.
   */
  readonly limitStore?: LimitStore;
  /**
   * Prices per model, over those of the model catalog (`tokenlens`): `'<provider>/<model>'` or a
   * bare model name → `{ input, output, cacheRead?, cacheWrite? }` in US dollars per million
   * tokens. A model priced nowhere has an unknown cost (never 0). Bad prices are a `TypeError`.
   */
  readonly prices?: PriceTable;
}

/** Service identifier of the kernel's {@link KernelOptions} (as given to its constructor). */
export const KernelOptions: unique symbol = Symbol.for('kosong.KernelOptions');
