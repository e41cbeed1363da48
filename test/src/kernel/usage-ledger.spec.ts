import { Kernel, definePlugin, textPart, tokenUsage, type HookErrorReport, type TokenUsage } from '@kosong/core';
import { MemoryUsageLedger, type UsageLedger, type UsageQuery, type UsageRecord } from '@kosong/core/kernel';
import { MockChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';
import sinon from 'sinon';
import { historyOf } from './limits-support.js';
import { rejectionOf, seededRandom } from './support.js';

const base = { systemPrompt: 'You are a test.' };

/** A MockChatProvider under another provider name (as the catalog knows it). */
function namedMock(name: string, modelName: string, usage: TokenUsage): MockChatProvider {
  const provider = new MockChatProvider([textPart('ok')], { modelName, usage });
  Object.defineProperty(provider, 'name', { value: name });
  return provider;
}

const plugin = (providers: Record<string, MockChatProvider>) =>
  definePlugin({
    name: 'providers',
    setup(ctx) {
      for (const [name, provider] of Object.entries(providers)) ctx.bindChatProvider(name, provider);
    },
  });

describe('kernel: the usage ledger', () => {
  afterEach(() => sinon.restore());

  it('totals equal the sum of the steps\' TokenUsage exactly over 10 000 steps, by tenant, provider and model', async function () {
    this.timeout(60_000);
    const random = seededRandom(24);
    const count = (): number => Math.floor(random() * 5000);
    const providers: Record<string, MockChatProvider> = {};
    const usages: Record<string, TokenUsage> = {};
    for (let i = 0; i < 6; i++) {
      const usage = tokenUsage({ inputOther: count(), output: count(), inputCacheRead: count(), inputCacheCreation: i % 2 === 0 ? count() : 0 });
      providers[`p${i}`] = new MockChatProvider([textPart('ok')], { modelName: `model-${i % 3}-${i}`, usage });
      usages[`p${i}`] = usage;
    }
    // model-x-5 has no price; the others have.
    const prices = Object.fromEntries([0, 1, 2, 3, 4].map((i) => [`mock/model-${i % 3}-${i}`, { input: 1 + i, output: 2 + i, cacheRead: 0.5 }]));
    const kernel = new Kernel({ prices });
    await kernel.use(plugin(providers));
    const tenants = ['acme', 'globex', 'initech'];
    for (const tenant of tenants) kernel.tenants.define(tenant);
    const expected = new Map<string, { steps: number; usage: TokenUsage; cost: number; unknown: number }>();
    const add = (key: string, usage: TokenUsage, cost: number | undefined): void => {
      const row = expected.get(key) ?? { steps: 0, usage: tokenUsage(), cost: 0, unknown: 0 };
      row.steps++;
      row.usage = {
        inputOther: row.usage.inputOther + usage.inputOther,
        output: row.usage.output + usage.output,
        inputCacheRead: row.usage.inputCacheRead + usage.inputCacheRead,
        inputCacheCreation: row.usage.inputCacheCreation + usage.inputCacheCreation,
      };
      if (cost === undefined) row.unknown++;
      else row.cost += cost;
      expected.set(key, row);
    };
    for (let batch = 0; batch < 100; batch++) {
      await Promise.all(
        Array.from({ length: 100 }, () => {
          const tenant = tenants[Math.floor(random() * 3)]!;
          const name = `p${Math.floor(random() * 6)}`;
          const provider = providers[name]!;
          const usage = usages[name]!;
          const price = prices[`mock/${provider.modelName}`];
          const cost = price && (usage.inputOther * price.input + usage.output * price.output + usage.inputCacheRead * price.cacheRead + usage.inputCacheCreation * price.input) / 1e6;
          add(`${tenant}|${provider.modelName}`, usage, cost);
          add('all', usage, cost);
          return kernel.runner({ tenant, provider: name }).step({ ...base, history: historyOf('x') });
        }),
      );
    }
    const [total] = await kernel.usage.query();
    const all = expected.get('all')!;
    expect(total!.steps).to.equal(10_000);
    expect(total!.usage).to.deep.equal(all.usage);
    expect(total!.unknownCostSteps).to.equal(all.unknown).and.to.be.greaterThan(0);
    expect(total!.costUsd, 'some steps have no price').to.equal(undefined);
    expect(total!.knownCostUsd).to.be.closeTo(all.cost, 1e-6);
    const rows = await kernel.usage.query({ groupBy: ['tenant', 'model'] });
    expect(rows.map((r) => `${r.tenant}|${r.model}`)).to.deep.equal([...expected.keys()].filter((k) => k !== 'all').sort());
    for (const row of rows) {
      const want = expected.get(`${row.tenant}|${row.model}`)!;
      expect(row.steps).to.equal(want.steps);
      expect(row.usage).to.deep.equal(want.usage);
      expect(row.unknownCostSteps).to.equal(want.unknown);
      if (want.unknown > 0) expect(row.costUsd).to.equal(undefined);
      else expect(row.costUsd).to.be.closeTo(want.cost, 1e-9);
      expect(row.provider, 'not grouped by provider').to.equal(undefined);
    }
    const acme = await kernel.usage.query({ tenant: 'acme', groupBy: ['provider'] });
    expect(acme).to.have.length(1);
    expect(acme[0]).to.include({ provider: 'mock', steps: [...expected].filter(([k]) => k.startsWith('acme|')).reduce((n, [, r]) => n + r.steps, 0) });
  });

  it('prices come from the tokenlens catalog (kosong provider names mapped), unless the price table has the model', async () => {
    const usage = tokenUsage({ inputOther: 1_000_000, output: 100_000, inputCacheRead: 200_000 });
    const providers = {
      openai: namedMock('openai', 'gpt-4o', usage),
      kimi: namedMock('kimi', 'kimi-k2-turbo-preview', usage),
      own: namedMock('openai', 'gpt-4o-mini', usage),
    };
    const kernel = new Kernel({ prices: { 'gpt-4o-mini': { input: 1, output: 1 } } });
    await kernel.use(plugin(providers));
    for (const name of Object.keys(providers)) await kernel.runner({ provider: name }).step({ ...base, history: historyOf('x') });
    const rows = await kernel.usage.query({ groupBy: ['provider', 'model'] });
    const cost = (model: string): number | undefined => rows.find((r) => r.model === model)?.costUsd;
    expect(cost('gpt-4o')).to.be.closeTo(1 * 2.5 + 0.1 * 10 + 0.2 * 1.25, 1e-12); // tokenlens: $2.5 in, $10 out, $1.25 cache read per million
    expect(cost('kimi-k2-turbo-preview')).to.be.a('number').and.be.greaterThan(0); // found under moonshotai
    expect(cost('gpt-4o-mini')).to.be.closeTo(1 + 0.1 + 0.2, 1e-12); // the table's price wins (cache reads at the input price)
    expect(rows.every((r) => r.tenant === undefined && r.day === undefined)).to.equal(true);
  });

  it('an unknown model costs "unknown": costUsd undefined, counted in unknownCostSteps, never 0', async () => {
    const kernel = new Kernel();
    await kernel.use(plugin({ mock: new MockChatProvider([textPart('ok')], { modelName: 'nobody-knows', usage: tokenUsage({ output: 7 }) }) }));
    kernel.tenants.define('acme');
    await kernel.runner({ tenant: 'acme' }).step({ ...base, history: historyOf('x') });
    await kernel.runner({ tenant: 'acme' }).step({ ...base, history: historyOf('x') });
    const [row] = await kernel.usage.query({ tenant: 'acme', groupBy: ['tenant', 'provider', 'model', 'day'] });
    expect(row).to.deep.include({ tenant: 'acme', provider: 'mock', model: 'nobody-knows', steps: 2, costUsd: undefined, knownCostUsd: 0, unknownCostSteps: 2 });
    expect(row!.usage).to.deep.equal(tokenUsage({ output: 14 }));
    expect(await kernel.usage.spentUsd('acme', 0)).to.equal(0);
  });

  it('groups by UTC day, and since / until select whole days', async () => {
    const clock = sinon.useFakeTimers({ now: Date.UTC(2026, 2, 1, 23, 59, 0), toFake: ['Date'] });
    const kernel = new Kernel({ prices: { mock: { input: 1, output: 1 } } });
    await kernel.use(plugin({ mock: new MockChatProvider([textPart('ok')], { usage: tokenUsage({ inputOther: 10, output: 5 }) }) }));
    kernel.tenants.define('acme');
    const runner = kernel.runner({ tenant: 'acme' });
    await runner.step({ ...base, history: historyOf('x') });
    clock.tick(120_000); // 2 March, 00:01 UTC
    await runner.step({ ...base, history: historyOf('x') });
    await runner.step({ ...base, history: historyOf('x') });
    const days = await kernel.usage.query({ groupBy: ['day'] });
    expect(days.map((d) => [d.day, d.steps])).to.deep.equal([
      ['2026-03-01', 1],
      ['2026-03-02', 2],
    ]);
    expect((await kernel.usage.query({ since: new Date(Date.UTC(2026, 2, 2, 12)) }))[0]!.steps).to.equal(2);
    expect((await kernel.usage.query({ until: Date.UTC(2026, 2, 2) }))[0]!.steps).to.equal(1);
    expect((await kernel.usage.query({ since: Date.UTC(2026, 2, 3) }))[0]).to.deep.include({ steps: 0, costUsd: 0 });
    expect(await kernel.usage.spentUsd('acme', Date.UTC(2026, 2, 2))).to.be.closeTo(2 * 15e-6, 1e-15);
  });

  it('a failed step records nothing; a step whose provider reports no usage neither', async () => {
    const kernel = new Kernel();
    await kernel.use(
      plugin({
        failing: new MockChatProvider([textPart('a')], { errorAfter: { parts: 0, error: new Error('boom') }, usage: tokenUsage({ output: 1 }) }),
        silent: new MockChatProvider([textPart('a')]),
      }),
    );
    await rejectionOf(kernel.runner({ provider: 'failing' }).step({ ...base, history: historyOf('x') }));
    await kernel.runner({ provider: 'silent' }).step({ ...base, history: historyOf('x') });
    expect((await kernel.usage.query())[0]!.steps).to.equal(0);
  });

  it('a ledger of its own gets every record; one that rejects is reported to the HookErrorSink, never to the step', async () => {
    const records: UsageRecord[] = [];
    const reports: HookErrorReport[] = [];
    let fail = false;
    const ledger: UsageLedger = {
      record: async (record) => {
        if (fail) throw new Error('redis is down');
        records.push(record);
      },
      query: () => Promise.resolve([]),
      spentUsd: () => Promise.resolve(0),
    };
    const kernel = new Kernel({ usageLedger: ledger, prices: { mock: { input: 1, output: 2 } } });
    await kernel.use(
      plugin({ mock: new MockChatProvider([textPart('ok')], { usage: tokenUsage({ inputOther: 3, output: 4 }) }) }),
      definePlugin({ name: 'sink', setup: (ctx) => ctx.bindHookErrorSink({ report: (r) => void reports.push(r) }) }),
    );
    expect(kernel.usage).to.equal(ledger);
    kernel.tenants.define('acme');
    await kernel.runner({ tenant: 'acme' }).step({ ...base, history: historyOf('x') });
    expect(records).to.have.length(1);
    expect(records[0]).to.deep.include({ tenant: 'acme', provider: 'mock', model: 'mock', usage: tokenUsage({ inputOther: 3, output: 4 }) });
    expect(records[0]!.costUsd).to.be.closeTo(11e-6, 1e-15);
    expect(Object.isFrozen(records[0])).to.equal(true);
    fail = true;
    const result = await kernel.runner({ tenant: 'acme' }).step({ ...base, history: historyOf('x') });
    expect(result.message.content).to.deep.equal([textPart('ok')]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(reports).to.have.length(1);
    expect(reports[0]).to.deep.include({ plugin: 'kosong.usage', hook: 'record', tenant: 'acme', kind: 'rejected' });
  });

  it('bad queries, prices and ledgers are TypeErrors', async () => {
    const ledger = new MemoryUsageLedger();
    const bad: [unknown, RegExp][] = [
      [{ tenants: 'acme' }, /unknown option "tenants"/],
      [{ since: 'yesterday' }, /since must be a valid Date/],
      [{ until: new Date(Number.NaN) }, /until must be a valid Date/],
      [{ groupBy: ['week'] }, /groupBy must be an array of distinct keys/],
      [{ groupBy: 'day' }, /groupBy/],
      [{ groupBy: ['day', 'day'] }, /distinct/],
      [{ tenant: 5 }, /tenant must be a string/],
    ];
    for (const [query, pattern] of bad) {
      const error = await rejectionOf(ledger.query(query as UsageQuery));
      expect(error, JSON.stringify(query)).to.be.instanceOf(TypeError);
      expect((error as Error).message).to.match(pattern);
    }
    expect(() => new Kernel({ prices: { 'mock/x': { input: -1, output: 1 } } })).to.throw(TypeError, /input must be a finite number/);
    expect(() => new Kernel({ prices: { x: { input: 1, output: Number.NaN } } })).to.throw(TypeError, /output/);
    expect(() => new Kernel({ prices: { x: { input: 1, output: 1, cached: 1 } as never } })).to.throw(TypeError, /unknown field "cached"/);
    expect(() => new Kernel({ usageLedger: {} as UsageLedger })).to.throw(TypeError, /usageLedger must be a UsageLedger/);
  });
});
