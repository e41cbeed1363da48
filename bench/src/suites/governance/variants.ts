/**
 * Variants of the `governance` suite: the `small` suite's step (10 text deltas and 2 tool calls)
 * through a kernel runner for one tenant, without limits and with limits held in memory (pacing
 * that never has to wait, concurrency caps, a budget). Both kernels price the model and record
 * every step in their usage ledger, so the difference is what enforcing the limits costs. With
 * `@kosong/bullmq`, the same with the ledger, then the limits too, in Redis.
 *
 * @module
 */
import { Kernel, definePlugin, tokenUsage } from '@kosong/core';
import { MemoryUsageLedger, type TenantLimits } from '@kosong/core/kernel';
import { RedisGovernance, RedisUsageLedger } from '@kosong/bullmq';
import { RedisServer } from '@kosong/bullmq/testing';
import type { PreparedVariant } from '../../harness.js';
import { repeated } from '../../repeated.js';
import { countRedisCommands, snapshot } from '../ledger/counters.js';
import { SMALL_RESPONSE } from '../small/variants.js';
import { prepareStep } from '../step/kosong.js';
import { LIMITS, REDIS_STEPS, STEPS, TENANT } from './workload.js';

export { LIMITS, REDIS_STEPS, STEPS, TENANT };

/** What the provider reports for each step. */
export const STEP_USAGE = tokenUsage({ inputOther: 120, output: 30 });

/** A price for the mock model, so that every step has a cost (and the budget something to count). */
const PRICES = { mock: { input: 2.5, output: 10 } };

/** `kernel.runner({ tenant }).step()` for a tenant without limits (`limits` undefined) or with them. */
export async function prepareTenantSteps(label: string, limits: TenantLimits | undefined): Promise<PreparedVariant<unknown>> {
  const ledger = new CountingLedger();
  const kernel = new Kernel({ prices: PRICES, usageLedger: ledger });
  const steps = await tenantSteps(label, kernel, limits, STEPS);
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

/** `count` small steps of the tenant (with `limits`, if any) through `kernel`'s runner, one after the other. */
async function tenantSteps(label: string, kernel: Kernel, limits: TenantLimits | undefined, count: number) {
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
  return repeated(prepared, count);
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

/**
 * The tenant's steps with governance in Redis (`@kosong/bullmq`, a redis-server of its own, no
 * persistence): `ledger` records each step in the `RedisUsageLedger` only (no limits); `limits`
 * gives the kernel `RedisGovernance`'s options (its ledger too) and the tenant {@link LIMITS}.
 * Every ioredis command of the process is counted (`countRedisCommands`); `measure` reports the
 * round trips and commands per step and checks, in Redis, that each step was recorded; `close`
 * lets go of everything (for tests).
 */
export async function prepareRedisSteps(mode: 'ledger' | 'limits'): Promise<PreparedVariant<unknown> & { close(): Promise<void> }> {
  const label = `redis-${mode}`;
  countRedisCommands();
  const server = await RedisServer.start();
  process.once('exit', () => server.killSync());
  const prefix = `bench-${mode}`;
  const governance = mode === 'limits' ? new RedisGovernance({ connection: server.url, prefix }) : undefined;
  const ledger = governance?.usageLedger ?? new RedisUsageLedger({ connection: server.url, prefix });
  const kernel = new Kernel({ prices: PRICES, ...(governance === undefined ? { usageLedger: ledger } : governance.kernelOptions) });
  const steps = await tenantSteps(label, kernel, mode === 'limits' ? LIMITS : undefined, REDIS_STEPS);
  await steps.run(); // warms the scripts' cache and the path
  const reference = await referenceRoundTrips(server.url);
  let before = snapshot();
  let recordedBefore = 0;
  return {
    async run() {
      recordedBefore = (await ledger.query({ tenant: TENANT }))[0]?.steps ?? 0;
      before = snapshot();
      return steps.run();
    },
    verify(outputs: unknown) {
      steps.verify(outputs as Parameters<typeof steps.verify>[0]);
    },
    async measure() {
      const after = snapshot();
      const recorded = ((await ledger.query({ tenant: TENANT }))[0]?.steps ?? 0) - recordedBefore;
      if (recorded !== REDIS_STEPS) throw new Error(`${label}: Redis recorded ${recorded} steps of a run of ${REDIS_STEPS}`);
      return {
        roundTripsPerStep: (after.roundTrips - before.roundTrips) / REDIS_STEPS,
        commandsPerStep: (after.commands - before.commands) / REDIS_STEPS,
        extraRoundTripsPerStep: (after.roundTrips - before.roundTrips) / REDIS_STEPS - reference,
      };
    },
    /** Disposes the kernel, closes the clients and stops the redis-server (the bench's child just exits). */
    async close() {
      await ledger.query({ tenant: TENANT }); // the last records applied first
      await kernel.dispose();
      await (governance === undefined ? ledger.close() : governance.close());
      await server.stop();
    },
  };
}

/** Steps of the untimed reference. */
const REFERENCE_STEPS = 50;

/**
 * The round trips per step of a tenant without limits whose steps are recorded in a
 * `RedisUsageLedger` (its one script call per step): measured untimed, in this process, on its own
 * keys, what the `extraRoundTripsPerStep` metric is counted from.
 */
async function referenceRoundTrips(url: string): Promise<number> {
  const ledger = new RedisUsageLedger({ connection: url, prefix: 'bench-reference' });
  const kernel = new Kernel({ prices: PRICES, usageLedger: ledger });
  const steps = await tenantSteps('redis reference', kernel, undefined, REFERENCE_STEPS);
  steps.verify(await steps.run()); // warms up
  const before = snapshot();
  steps.verify(await steps.run());
  const perStep = (snapshot().roundTrips - before.roundTrips) / REFERENCE_STEPS;
  await ledger.query({ tenant: TENANT }); // after the last record, on the same connection: it has been applied
  await kernel.dispose();
  await ledger.close();
  return perStep;
}
