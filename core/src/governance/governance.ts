/**
 * The kernel's governance: the usage ledger, the prices, and the default limits of tenants.
 *
 * @module
 */
import type { ChatProvider } from '../provider/chat-provider.js';
import type { TokenUsage } from '../provider/token-usage.js';
import type { HookErrorHandler } from '../runtime/hooks/hook-guard.js';
import type { LimitStore } from './limit-store.js';
import { costOf, Pricing, type ModelPrice, type PriceTable } from './pricing.js';
import { limitsAnything, type TenantLimits } from './tenant-limits.js';
import { MemoryUsageLedger, type UsageLedger } from './usage-ledger.js';

/**
 * What a kernel's steps are recorded in and priced with, where its tenants' limits are counted,
 * and the limits of tenants without limits of their own. @internal
 */
export class Governance {
  readonly pricing: Pricing;
  /** The memory ledger when that is the ledger (recorded without a record object), else `undefined`. */
  readonly #memory: MemoryUsageLedger | undefined;
  /** The price of the last step's model: consecutive steps nearly always share it. */
  #lastPrice: { readonly provider: string; readonly model: string; readonly price: ModelPrice | undefined } | undefined;
  /** Limits of every tenant that has none of its own (`undefined`: none). */
  defaultLimits: TenantLimits | undefined;

  constructor(
    readonly ledger: UsageLedger,
    prices: PriceTable,
    defaultLimits: TenantLimits | undefined,
    /** Where tenants' caps and pacing are counted (`undefined`: in memory, this process). */
    readonly limitStore: LimitStore | undefined = undefined,
  ) {
    this.pricing = new Pricing(prices);
    this.#memory = ledger instanceof MemoryUsageLedger ? ledger : undefined;
    this.defaultLimits = limitsAnything(defaultLimits) ? defaultLimits : undefined;
  }

  /** A new ledger in memory, when the kernel is given none. */
  static memoryLedger(): UsageLedger {
    return new MemoryUsageLedger();
  }

  /**
   * Records a step that ended with `usage` (nothing for a step without usage: it failed, or its
   * provider reports none). A ledger that throws or rejects is reported to `onHookError` (as plugin
   * `kosong.usage`, hook `record`), never to the step.
   */
  record(tenant: string | undefined, provider: ChatProvider, usage: TokenUsage | undefined, stepId: string, onHookError: HookErrorHandler): void {
    if (usage === undefined) return;
    const { name, modelName } = provider;
    const last = this.#lastPrice;
    let price: ModelPrice | undefined;
    if (last !== undefined && last.provider === name && last.model === modelName) {
      price = last.price;
    } else {
      price = this.pricing.priceOf(name, modelName);
      this.#lastPrice = { provider: name, model: modelName, price };
    }
    const costUsd = price === undefined ? undefined : costOf(usage, price);
    const at = Date.now();
    const memory = this.#memory;
    if (memory !== undefined) {
      memory.add(tenant, name, modelName, usage, costUsd, at);
      return;
    }
    const report = (error: unknown, kind: 'threw' | 'rejected'): void =>
      onHookError({ plugin: 'kosong.usage', hook: 'record', stepId, tenant, provider: name, model: modelName, kind, error, detached: false });
    try {
      const recorded = this.ledger.record(Object.freeze({ tenant, provider: name, model: modelName, usage, costUsd, at }));
      if (recorded !== undefined) recorded.then(undefined, (error: unknown) => report(error, 'rejected'));
    } catch (error) {
      report(error, 'threw');
    }
  }
}
