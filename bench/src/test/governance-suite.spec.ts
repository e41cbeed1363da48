/**
 * The `governance` suite measures what it says: both variants run real steps through the kernel
 * runner and record each in the usage ledger; the limits of `runner+limits` never make a step wait
 * (under `onLimit: 'refuse'` no step is refused), and they are enforced on that path (a budget
 * below one step's priced usage stops the run). The Redis pair records every step in Redis and counts its round trips.
 */
import { TenantBudgetExceededError } from '@kosong/core/kernel';
import { expect } from 'chai';
import { findSuite } from '../suites/index.js';
import { LIMITS, prepareRedisSteps, prepareTenantSteps, prepareWithMemoryLimits, prepareWithoutLimits, STEPS } from '../suites/governance/variants.js';

describe('bench: the governance suite', function () {
  this.timeout(30_000);

  it('pairs the limits variant with the runner (target ≤ 1.05×), the Redis limits with the Redis ledger (target ≤ 1 extra round trip a step)', () => {
    const suite = findSuite('governance');
    expect(suite.variants.map((variant) => [variant.name, variant.baseline ?? suite.baseline])).to.deep.equal([
      ['runner', 'runner'],
      ['runner+limits', 'runner'],
      ['redis-ledger', 'redis-ledger'],
      ['redis-limits', 'redis-ledger'],
    ]);
    expect(suite.targets).to.deep.equal([
      { variant: 'runner+limits', baseline: 'runner', maxRatio: 1.05 },
      { variant: 'redis-limits', metric: 'extraRoundTripsPerStep', max: 1 },
    ]);
  });

  for (const [name, prepare] of [
    ['runner', prepareWithoutLimits],
    ['runner+limits', prepareWithMemoryLimits],
  ] as const) {
    it(`${name}: runs ${STEPS} steps, each verified and recorded in the ledger; a wrong output fails verify`, async () => {
      const variant = await prepare();
      const outputs = (await variant.run()) as unknown[];
      variant.verify(outputs);
      expect(outputs).to.have.length(STEPS);
      expect(() => variant.verify(outputs.slice(1))).to.throw(/expected 2000 outputs/);
    });
  }

  it('its limits never make a step wait: refused instead of waiting, none is', async () => {
    const variant = await prepareTenantSteps('refusing', { ...LIMITS, onLimit: 'refuse' });
    variant.verify(await variant.run());
  });

  it('the Redis pair: each step recorded in Redis (checked by measure), its round trips counted', async () => {
    for (const mode of ['ledger', 'limits'] as const) {
      const variant = await prepareRedisSteps(mode);
      let metrics: Readonly<Record<string, number>>;
      try {
        const output = await variant.run();
        variant.verify(output);
        metrics = await variant.measure!(output);
      } finally {
        await variant.close();
      }
      // At least the usage record's one script call per step; the limits add their own.
      expect(metrics.roundTripsPerStep, mode).to.be.at.least(mode === 'ledger' ? 1 : 2);
      expect(metrics.commandsPerStep, mode).to.be.at.least(metrics.roundTripsPerStep!);
      // The ledger-only variant is the reference itself: no extra round trip.
      if (mode === 'ledger') expect(metrics.extraRoundTripsPerStep).to.equal(0);
      else expect(metrics.extraRoundTripsPerStep).to.be.above(0);
    }
  });

  it('its limits are enforced on the path measured: a budget below one step\'s cost stops the run with TenantBudgetExceededError', async () => {
    const variant = await prepareTenantSteps('tiny budget', { ...LIMITS, budget: { usd: 1e-9, per: 'day' } });
    let error: unknown;
    await variant.run().catch((thrown: unknown) => (error = thrown));
    expect(TenantBudgetExceededError.isInstance(error), String(error)).to.equal(true);
  });
});
