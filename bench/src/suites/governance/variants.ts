/**
 * Variants of the `governance` suite: the `small` suite's step (10 text deltas and 2 tool calls)
 * through a kernel runner for one tenant, without limits and with limits held in memory (pacing
 * that never has to wait, concurrency caps, a budget). Both kernels price the model and record
 * every step in their usage ledger, so the difference is what enforcing the limits costs.
 *
 * @module
 */
import { Kernel, definePlugin, tokenUsage } from '@kosong/core';
import { MemoryUsageLedger, type TenantLimits } from '@kosong/core/kernel';
import type { PreparedVariant } from '../../harness.js';
import { repeated } from '../../repeated.js';
import { SMALL_RESPONSE } from '../small/variants.js';
import { prepareStep } from '../step/kosong.js';

/** Steps per timed run, one after the other. */
export const STEPS = 2_000;
/** The tenant the steps run for. */
export const TENANT = 'acme';
/** What the provider reports for each step. */
export const STEP_USAGE = tokenUsage({ inputOther: 120, output: 30 });

/**
 * The limits of the `limits` variant: every kind the governor enforces, each high enough never to
 * make a step or a call wait (one step runs at a time, 2 calls each), so that only their bookkeeping is measured.
 */
export const LIMITS: TenantLimits = {
  requestsPerMinute: 1_000_000_000,
  tokensPerMinute: 1_000_000_000_000,
  maxConcurrentSteps: 4,
  maxConcurrentToolCalls: 8,
  budget: { usd: 1_000_000, per: 'day' },
};

/** A price for the mock model, so that every step has a cost (and the budget something to count). */
const PRICES = { mock: { input: 2.5, output: 10 } };

/** `kernel.runner({ tenant }).step()` for a tenant without limits (`limits` undefined) or with them. */
export async function prepareTenantSteps(label: string, limits: TenantLimits | undefined): Promise<PreparedVariant<unknown>> {
  const ledger = new CountingLedger();
  const kernel = new Kernel({ prices: PRICES, usageLedger: ledger });
  const ready: Promise<void>[] = [];
  const prepared = prepareStep(
    label,
    (provider, toolset) => {
      ready.push(
        kernel.use(
          definePlugin({
            name: 'bench',
            setup(ctx) {
              ctx.bindChatProvider('mock', provider);
              ctx.bindToolset(toolset);
            },
          }),
        ),
      );
      kernel.tenants.define(TENANT, limits === undefined ? {} : { limits });
      const runner = kernel.runner({ tenant: TENANT });
      return () => runner.step({ systemPrompt: 'You are a benchmark.', history: [] });
    },
    SMALL_RESPONSE,
    STEP_USAGE,
  );
  await Promise.all(ready);
  const steps = repeated(prepared, STEPS);
  return {
    run() {
      ledger.recorded = 0;
      return steps.run();
    },
    verify(outputs: unknown) {
      steps.verify(outputs as Parameters<typeof steps.verify>[0]);
      if (ledger.recorded !== STEPS) throw new Error(`${label}: the usage ledger recorded ${ledger.recorded} steps of a run of ${STEPS}`);
    },
  };
}

/** The kernel's memory ledger (so the kernel takes its fast path), counting the steps it records for the tenant. */
class CountingLedger extends MemoryUsageLedger {
  recorded = 0;

  override add(...args: Parameters<MemoryUsageLedger['add']>): void {
    if (args[0] === TENANT) this.recorded++;
    super.add(...args);
  }
}

/** The tenant without limits: the baseline. */
export function prepareWithoutLimits(): Promise<PreparedVariant> {
  return prepareTenantSteps('runner', undefined);
}

/** The tenant with {@link LIMITS}, in memory. */
export function prepareWithMemoryLimits(): Promise<PreparedVariant> {
  return prepareTenantSteps('runner+limits', LIMITS);
}
