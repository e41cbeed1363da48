import { DAY_MS, MemoryUsageLedger, queryDays, usageRows, type UsageBucket, type UsageQuery, type UsageRecord } from '@kosong/core/kernel';
import { expect } from 'chai';

/** Records of 2 tenants (and none), 2 models, 3 days; one without a price. */
function records(): UsageRecord[] {
  const at = Date.UTC(2026, 0, 10, 12);
  const list: UsageRecord[] = [];
  for (let i = 0; i < 30; i++) {
    list.push({
      tenant: i % 5 === 0 ? undefined : i % 2 === 0 ? 'acme' : 'beta',
      provider: 'mock',
      model: i % 3 === 0 ? 'big' : 'small',
      usage: { inputOther: i, output: 2 * i, inputCacheRead: i % 4, inputCacheCreation: i % 2 },
      costUsd: i === 7 ? undefined : i / 1000,
      at: at + (i % 3) * DAY_MS,
    });
  }
  return list;
}

/** The buckets a ledger of its own would keep for `list`: one per tenant, provider, model and day. */
function bucketsOf(list: readonly UsageRecord[]): UsageBucket[] {
  const buckets = new Map<string, UsageBucket & { [key: string]: unknown }>();
  for (const r of list) {
    const day = Math.floor(r.at / DAY_MS);
    const id = JSON.stringify([r.tenant ?? null, r.provider, r.model, day]);
    const b = buckets.get(id) ?? { tenant: r.tenant, provider: r.provider, model: r.model, day, steps: 0, inputOther: 0, output: 0, inputCacheRead: 0, inputCacheCreation: 0, knownCostUsd: 0, unknownCostSteps: 0 };
    buckets.set(id, {
      ...b,
      steps: b.steps + 1,
      inputOther: b.inputOther + r.usage.inputOther,
      output: b.output + r.usage.output,
      inputCacheRead: b.inputCacheRead + r.usage.inputCacheRead,
      inputCacheCreation: b.inputCacheCreation + r.usage.inputCacheCreation,
      knownCostUsd: b.knownCostUsd + (r.costUsd ?? 0),
      unknownCostSteps: b.unknownCostSteps + (r.costUsd === undefined ? 1 : 0),
    });
  }
  return [...buckets.values()];
}

describe('usage ledger: usageRows and queryDays, for ledgers of their own', () => {
  const memory = new MemoryUsageLedger();
  const list = records();
  for (const r of list) memory.record(r);
  const queries: UsageQuery[] = [
    {},
    { groupBy: ['tenant'] },
    { groupBy: ['day', 'model'] },
    { tenant: 'acme', groupBy: ['model', 'day'] },
    { since: Date.UTC(2026, 0, 11), groupBy: ['tenant', 'provider', 'model', 'day'] },
    { until: Date.UTC(2026, 0, 11), groupBy: ['tenant'] },
    { tenant: 'nobody' },
  ];
  for (const query of queries) {
    it(`gives the rows the memory ledger gives: ${JSON.stringify(query)}`, async () => {
      expect(usageRows(query, bucketsOf(list))).to.deep.equal(await memory.query(query));
    });
  }

  it('selects whole UTC days, and refuses a bad query with a TypeError', () => {
    expect(queryDays({})).to.deep.equal({ from: -Infinity, to: Infinity });
    expect(queryDays({ since: Date.UTC(2026, 0, 11, 5), until: Date.UTC(2026, 0, 12) })).to.deep.equal({ from: Date.UTC(2026, 0, 11) / DAY_MS, to: Date.UTC(2026, 0, 12) / DAY_MS });
    expect(() => usageRows({ groupBy: ['week' as never] }, [])).to.throw(TypeError, /groupBy/);
    expect(() => usageRows({ tenants: 'acme' } as never, [])).to.throw(TypeError, /unknown option "tenants"/);
  });
});
