import { TenantBudgetExceededError, TenantLimitError, toolOk, type HookErrorReport, type Kernel, type TokenUsage, type Toolset } from '@kosong/core';
import type { UsageLedger } from '@kosong/core/kernel';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { RedisGovernance, RedisUnavailableError, RedisUsageLedger } from '../index.js';
import { RedisServer } from '../testing/redis-server.js';
import { TestProcess } from '../testing/test-process.js';
import { fixture } from './fixtures.js';
import { governedKernel, historyOf, UsageProvider } from './governance-support.js';
import { closeAll, sleep, testPrefix, until } from './support.js';

/** A step's usage, different for every step number (so that sums catch a lost or doubled one). */
function usageOfStep(tag: string): TokenUsage {
  const n = Number(tag.replace(/\D/g, '')) || 0;
  return { inputOther: 100 + (n % 97), output: 1 + (n % 13), inputCacheRead: n % 7, inputCacheCreation: n % 3 };
}

function sumOf(usages: readonly TokenUsage[]): TokenUsage {
  const total = { inputOther: 0, output: 0, inputCacheRead: 0, inputCacheCreation: 0 };
  for (const u of usages) {
    total.inputOther += u.inputOther;
    total.output += u.output;
    total.inputCacheRead += u.inputCacheRead;
    total.inputCacheCreation += u.inputCacheCreation;
  }
  return total;
}

async function rejectionOf(run: Promise<unknown>): Promise<unknown> {
  try {
    await run;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

/** Runs `count` steps `concurrency` at a time, step `i` on `kernels[i % n]` for tenant `tenantOf(i)`. */
async function runSteps(kernels: readonly Kernel[], count: number, concurrency: number, tenantOf: (i: number) => string): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        const result = await kernels[i % kernels.length]!.runner({ tenant: tenantOf(i) }).step({ systemPrompt: '', history: historyOf(`step ${i}`) });
        await result.toolResults();
      }
    }),
  );
}

/**
 * Counts the round trips of the ioredis clients named `name` in this process (a command on its
 * own is one; a pipeline is one together), by wrapping `Redis.prototype.sendCommand`.
 */
function countRoundTrips(name: string): { readonly count: number; restore(): void } {
  const proto = Redis.prototype as unknown as { sendCommand(this: Redis, command: unknown, stream?: object): unknown };
  const original = proto.sendCommand;
  const pipelines = new WeakSet<object>();
  let count = 0;
  proto.sendCommand = function (this: Redis, command: unknown, stream?: object) {
    if (this.options.connectionName === name) {
      if (stream === undefined) count++;
      else if (!pipelines.has(stream)) {
        pipelines.add(stream);
        count++;
      }
    }
    return original.call(this, command, stream);
  };
  return {
    get count() {
      return count;
    },
    restore: () => void (proto.sendCommand = original),
  };
}

describe('tenant limits and the usage ledger in Redis (RedisGovernance, real Redis)', function () {
  this.timeout(120_000);
  let server: RedisServer;
  const closers: (() => Promise<unknown>)[] = [];

  before(async () => {
    server = await RedisServer.start();
  });
  afterEach(() => closeAll(closers));
  after(() => server.stop());

  /** A governance and a kernel on it, as one worker has (closed after the test). */
  async function worker(prefix: string, provider: UsageProvider, options: { leaseMs?: number; pollMs?: number } = {}, reports: HookErrorReport[] = []) {
    const governance = new RedisGovernance({ connection: server.url, prefix, ...options });
    closers.push(() => governance.close());
    const kernel = await governedKernel(provider, governance.kernelOptions, reports);
    closers.push(() => kernel.dispose());
    return { governance, kernel };
  }

  it('refuses options it does not know and leases that are not positive integers', () => {
    expect(() => new RedisGovernance({ connection: server.url, leaseMs: 0 })).to.throw(TypeError, /leaseMs/);
    expect(() => new RedisGovernance({ connection: server.url, pollMs: 1.5 })).to.throw(TypeError, /pollMs/);
    expect(() => new RedisGovernance({ connection: server.url, lease: 5 } as never)).to.throw(TypeError, /lease/);
    expect(() => new RedisUsageLedger({ connection: server.url, ttl: 5 } as never)).to.throw(TypeError, /ttl/);
  });

  it("ledger totals equal the sum of the steps' TokenUsage exactly, over 10 000 steps of 2 workers", async () => {
    const prefix = testPrefix();
    const provider = new UsageProvider(usageOfStep);
    const workers = [await worker(prefix, provider), await worker(prefix, provider)];
    for (const { kernel } of workers) for (const tenant of ['acme', 'beta']) kernel.tenants.define(tenant, {});
    const count = 10_000;
    const tenantOf = (i: number): string => (i % 3 === 0 ? 'beta' : 'acme');
    await runSteps(
      workers.map((w) => w.kernel),
      count,
      64,
      tenantOf,
    );
    // Records are sent as the steps end: wait until every one is in.
    const ledger = workers[0]!.governance.usageLedger;
    await until(async () => (await ledger.query())[0]!.steps === count, 20_000, 'every record');
    const byTenant = await ledger.query({ groupBy: ['tenant'] });
    for (const tenant of ['acme', 'beta']) {
      const steps = Array.from({ length: count }, (_, i) => i).filter((i) => tenantOf(i) === tenant);
      const row = byTenant.find((r) => r.tenant === tenant)!;
      expect(row.steps, tenant).to.equal(steps.length);
      expect(row.usage, tenant).to.deep.equal(sumOf(steps.map((i) => usageOfStep(`step ${i}`))));
      expect(row.unknownCostSteps).to.equal(0);
      const cost = steps.reduce((sum, i) => {
        const u = usageOfStep(`step ${i}`);
        return sum + ((u.inputOther + u.inputCacheRead + u.inputCacheCreation) * 3 + u.output * 15) / 1e6;
      }, 0);
      expect(row.costUsd).to.be.closeTo(cost, 1e-9);
      expect(await ledger.spentUsd(tenant, Date.now())).to.be.closeTo(cost, 1e-9);
    }
    const byDay = await ledger.query({ tenant: 'acme', groupBy: ['provider', 'model', 'day'] });
    expect(byDay.map((r) => [r.provider, r.model, r.day])).to.deep.equal([['usage', 'usage-model', new Date().toISOString().slice(0, 10)]]);
    expect(await ledger.query({ since: Date.now() + 2 * 86_400_000 })).to.deep.equal([{ steps: 0, usage: { inputOther: 0, output: 0, inputCacheRead: 0, inputCacheCreation: 0 }, costUsd: 0, knownCostUsd: 0, unknownCostSteps: 0 }]);
    expect(await rejectionOf(ledger.query({ groupBy: ['week' as never] }))).to.be.instanceOf(TypeError);
  });

  it('costs one Redis command per step for its usage record, and one more for every limit the step has: a step cap, both pacing limits and a budget', async () => {
    const prefix = testPrefix();
    const { kernel } = await worker(prefix, new UsageProvider());
    kernel.tenants.define('free', {});
    kernel.tenants.define('capped', { limits: { maxConcurrentSteps: 16 } }); // room for all: no step waits (a waiter tries again)
    kernel.tenants.define('limited', {
      limits: { maxConcurrentSteps: 16, maxConcurrentToolCalls: 4, requestsPerMinute: 10_000, tokensPerMinute: 10_000_000, budget: { usd: 1_000, per: 'day' } },
    });
    const admin = new Redis(server.url);
    closers.push(async () => admin.disconnect());
    const stepsIn = async (tenant: string): Promise<number> => {
      const name = JSON.stringify([tenant, 'usage', 'usage-model', Math.floor(Date.now() / 86_400_000)]);
      return Number((await admin.hget(`${prefix}:{usage}:b:${name}`, 'steps')) ?? 0);
    };
    // The commands the workers' clients send, as MONITOR sees them (not those a script runs: source 'lua'; not this test's own).
    const adminAddress = /addr=(\S+)/.exec(String(await admin.client('INFO')))![1]!;
    const monitor = await admin.monitor();
    closers.push(async () => monitor.disconnect());
    let seen: Record<string, number> = {};
    let flushed = false;
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      if (source === adminAddress) flushed ||= args[0] === 'ping';
      else if (source !== 'lua') seen[args[0]!.toLowerCase()] = (seen[args[0]!.toLowerCase()] ?? 0) + 1;
    });
    const commands = async (): Promise<Record<string, number>> => {
      flushed = false;
      await admin.ping(); // the monitor has seen every command sent before this one once it shows this
      await until(() => flushed, 2_000, 'the monitor');
      return seen;
    };
    for (const [tenant, expected] of [
      ['free', { evalsha: 100 }], // the record
      ['capped', { evalsha: 200 }], // the admission; the record, which gives the place back
      ['limited', { evalsha: 200 }], // the admission (place, request, tokens, budget); the record (place back, tokens corrected)
    ] as const) {
      await runSteps([kernel], 1, 1, () => tenant); // warm: scripts loaded, clients ready
      await until(async () => (await stepsIn(tenant)) === 1, 5_000, 'the first record');
      await commands(); // the monitor is done with the warm-up
      seen = {};
      await runSteps([kernel], 100, 8, () => tenant);
      await until(async () => (await stepsIn(tenant)) === 101, 5_000, 'every record');
      await sleep(50); // the last places given back
      expect(await commands(), tenant).to.deep.equal(expected);
    }
    // What the limited tenant's 101 steps left counted: no place held, 101 requests, their real tokens (12 each: the estimates corrected).
    expect(await admin.zcard(`${prefix}:gov:cap:{limited}:steps`)).to.equal(0);
    expect(await admin.get(`${prefix}:gov:pace:limited:requests`)).to.equal('101');
    expect(await admin.get(`${prefix}:gov:pace:limited:tokens`)).to.equal(String(101 * 12));
  });

  it('a step with 2 tool calls and every limit in Redis costs 2 round trips, with or without maxConcurrentToolCalls: one more than the record of a step without limits', async () => {
    const prefix = testPrefix();
    // A lease of an hour: its renewal (every third of it) never falls among the steps counted.
    const { kernel } = await worker(prefix, new UsageProvider(undefined, 0, 2), { leaseMs: 3_600_000 });
    let ran = 0;
    const toolset: Toolset = {
      tools: [{ name: 'work', description: 'Works.', parameters: { type: 'object', properties: {} } }],
      handle: (call) => {
        ran++;
        return { toolCallId: call.id, returnValue: toolOk({ output: 'done' }) };
      },
    };
    const limits = { maxConcurrentSteps: 16, requestsPerMinute: 10_000, tokensPerMinute: 10_000_000, budget: { usd: 1_000, per: 'day' as const } };
    kernel.tenants.define('free', { toolset });
    kernel.tenants.define('limited', { toolset, limits });
    kernel.tenants.define('capped', { toolset, limits: { ...limits, maxConcurrentToolCalls: 4 } });
    kernel.tenants.define('calls-only', { toolset, limits: { maxConcurrentToolCalls: 4 } });
    const admin = new Redis(server.url);
    closers.push(async () => admin.disconnect());
    const stepsIn = async (tenant: string): Promise<number> => {
      const name = JSON.stringify([tenant, 'usage', 'usage-model', Math.floor(Date.now() / 86_400_000)]);
      return Number((await admin.hget(`${prefix}:{usage}:b:${name}`, 'steps')) ?? 0);
    };
    const trips = countRoundTrips('kosong-governance');
    closers.push(async () => trips.restore());
    // The limits just defined are announced to the workers, and each announcement read back on this
    // connection: counted among the first tenant's steps under load (22 for 20), unless they are all in first.
    await until(async () => {
      const seen = trips.count;
      await sleep(300);
      return trips.count === seen;
    }, 10_000, 'the announcements of the limits to be read');
    for (const [tenant, perStep] of [
      ['free', 1], // the record
      ['limited', 2], // the admission (place, request, tokens, budget); the record (place back, tokens corrected)
      ['capped', 2], // the same: the admission also takes 2 places for the calls, the record gives them back
      ['calls-only', 2], // the admission takes the calls' places; the record gives them back
    ] as const) {
      await runSteps([kernel], 2, 1, () => tenant); // warm: scripts loaded, the calls of a step seen
      await until(async () => (await stepsIn(tenant)) === 2, 5_000, 'the first records');
      const before = trips.count;
      const ranBefore = ran;
      await runSteps([kernel], 20, 1, () => tenant);
      await until(async () => (await stepsIn(tenant)) === 22, 5_000, 'every record');
      expect(ran - ranBefore, tenant).to.equal(40);
      expect(trips.count - before, `${tenant}: round trips of 20 steps`).to.equal(20 * perStep);
      expect(await admin.zcard(`${prefix}:gov:cap:{${tenant}}:toolCalls`), `${tenant}: places left held`).to.equal(0);
    }
    expect(await admin.zcard(`${prefix}:gov:cap:{capped}:steps`)).to.equal(0);
  });

  it('the places a step takes for its calls keep the tool-call cap across two workers, are given back when it ends, and a lower cap gives the spare ones back at once', async () => {
    const prefix = testPrefix();
    const provider = new UsageProvider(undefined, 5, 3);
    const workers = [await worker(prefix, provider, { pollMs: 5 }), await worker(prefix, provider, { pollMs: 5 })];
    let running = 0;
    let maxRunning = 0;
    const toolset: Toolset = {
      tools: [{ name: 'work', description: 'Works.', parameters: { type: 'object', properties: {} } }],
      handle: async (call) => {
        running++;
        maxRunning = Math.max(maxRunning, running);
        await sleep(3);
        running--;
        return { toolCallId: call.id, returnValue: toolOk({ output: 'done' }) };
      },
    };
    for (const { kernel } of workers) kernel.tenants.define('acme', { toolset, limits: { maxConcurrentToolCalls: 4, maxConcurrentSteps: 8 } });
    const admin = new Redis(server.url);
    closers.push(async () => admin.disconnect());
    const key = `${prefix}:gov:cap:{acme}:toolCalls`;
    let maxHeld = 0;
    let watching = true;
    const watch = (async () => {
      while (watching) {
        maxHeld = Math.max(maxHeld, await admin.zcard(key));
        await sleep(1);
      }
    })();
    await runSteps(
      workers.map((w) => w.kernel),
      60,
      12,
      () => 'acme',
    );
    watching = false;
    await watch;
    expect(maxRunning, 'calls running at once, over both workers').to.be.at.most(4);
    expect(maxHeld, 'places held in Redis at once').to.be.at.most(4);
    await until(async () => (await admin.zcard(key)) === 0, 5_000, 'every place given back');

    // One step that holds its places while it waits for its model: a lower cap gives its spare places back now.
    let letGo = (): void => undefined;
    let held = Promise.resolve();
    const slow = new (class extends UsageProvider {
      override async generate(...args: Parameters<UsageProvider['generate']>) {
        await held; // the model answers once the test lets it
        return super.generate(...args);
      }
    })(undefined, 0, 3);
    const { kernel } = await worker(prefix, slow);
    kernel.tenants.define('slow', { toolset, limits: { maxConcurrentToolCalls: 3 } });
    await runSteps([kernel], 1, 1, () => 'slow'); // learns: 3 calls a step
    held = new Promise<void>((resolve) => (letGo = resolve));
    const step = runSteps([kernel], 1, 1, () => 'slow');
    const slowKey = `${prefix}:gov:cap:{slow}:toolCalls`;
    try {
      await until(async () => (await admin.zcard(slowKey)) === 3, 5_000, 'the places taken with the admission');
      kernel.tenants.setLimits('slow', { maxConcurrentToolCalls: 1 });
      await until(async () => (await admin.zcard(slowKey)) === 0, 5_000, 'the spare places given back');
      expect(running, 'no call ran yet').to.equal(0);
    } finally {
      letGo();
      await step;
    }
    expect(maxRunning).to.be.at.most(4);
    expect(await admin.zcard(slowKey)).to.equal(0);
  });

  it('holds a tenant to its caps across two workers; another tenant is not delayed by its queue', async () => {
    const prefix = testPrefix();
    const provider = new UsageProvider(undefined, 150);
    const workers = [await worker(prefix, provider, { pollMs: 10 }), await worker(prefix, provider, { pollMs: 10 })];
    for (const { kernel } of workers) {
      kernel.tenants.define('heavy', { limits: { maxConcurrentSteps: 3 } });
      kernel.tenants.define('light', { limits: { maxConcurrentSteps: 3 } });
    }
    const heavy = runSteps(
      workers.map((w) => w.kernel),
      24,
      12,
      () => 'heavy',
    );
    await until(() => provider.active === 3, 5_000, 'three heavy steps');
    const started = performance.now();
    await runSteps([workers[1]!.kernel], 1, 1, () => 'light');
    const lightMs = performance.now() - started;
    await heavy;
    // 3 heavy + 1 light at most, at the provider (24 heavy steps of 150 ms, 12 trying at once).
    expect(provider.maxActive).to.equal(4);
    expect(lightMs, 'the light step waited for no heavy one (one step is 150 ms)').to.be.below(300);
  });

  it('a limit change under load takes effect at the next admission, on every worker', async () => {
    const prefix = testPrefix();
    const provider = new UsageProvider(undefined, 60);
    const workers = [await worker(prefix, provider, { pollMs: 5 }), await worker(prefix, provider, { pollMs: 5 })];
    for (const { kernel } of workers) kernel.tenants.define('acme', { limits: { maxConcurrentSteps: 4 } });
    const load = runSteps(
      workers.map((w) => w.kernel),
      80,
      16,
      () => 'acme',
    );
    await until(() => provider.active === 4, 5_000, 'four steps at once');
    for (const { kernel } of workers) kernel.tenants.setLimits('acme', { maxConcurrentSteps: 1 });
    // The steps running keep their places (60 ms each); from then on, one at a time.
    await sleep(100);
    provider.maxActive = provider.active;
    expect(provider.active).to.be.at.most(1);
    await sleep(600);
    expect(provider.maxActive, 'at most one step at once after the change').to.equal(1);
    for (const { kernel } of workers) kernel.tenants.setLimits('acme', { maxConcurrentSteps: 3 });
    await until(() => provider.active === 3, 5_000, 'three steps at once after the cap was raised');
    await load;
  });

  it('a limits change on one worker (tenants.define, setLimits) holds at the next admission on every worker of the Redis; bad shared limits fail the admission with a TypeError', async () => {
    const prefix = testPrefix();
    const provider = new UsageProvider(undefined, 40);
    const a = await worker(prefix, provider);
    const b = await worker(prefix, provider);
    a.kernel.tenants.define('acme', { limits: { maxConcurrentSteps: 8 } });
    b.kernel.tenants.define('acme', { limits: { maxConcurrentSteps: 8 } });
    const admin = new Redis(server.url);
    closers.push(async () => admin.disconnect());
    const version = async (): Promise<number> => Number((await admin.hget(`${prefix}:gov:limits:v`, 'acme')) ?? 0);
    await until(async () => (await version()) === 2, 5_000, 'both defines shared');
    await runSteps([b.kernel], 4, 4, () => 'acme'); // B admits under version 2

    // Changed on A only: once in Redis, B's very next admission is under it (the admission script checks the version).
    a.kernel.tenants.setLimits('acme', { requestsPerMinute: 2, onLimit: 'refuse' });
    await until(async () => (await version()) === 3, 5_000, 'the change in Redis');
    const outcomes = await Promise.allSettled(Array.from({ length: 3 }, () => runSteps([b.kernel], 1, 1, () => 'acme')));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).to.have.length(2);
    const refused = (outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult).reason as TenantLimitError;
    expect(TenantLimitError.isInstance(refused), String(refused)).to.equal(true);
    expect(refused).to.deep.include({ limit: 'requestsPerMinute', max: 2 });
    // Announced too: A's governance hears of B's change without an admission.
    b.kernel.tenants.setLimits('acme', { maxConcurrentSteps: 1 });
    await until(() => a.governance.sharedLimits('acme')?.version === 4, 5_000, 'the announcement');
    expect(a.governance.sharedLimits('acme')?.limits).to.deep.equal({ maxConcurrentSteps: 1 });
    provider.maxActive = 0;
    await runSteps([a.kernel], 6, 6, () => 'acme');
    expect(provider.maxActive, "A's steps one at a time, as B said").to.equal(1);

    // Limits another process wrote that are no limits: refused, never applied as none.
    await admin.hset(`${prefix}:gov:limits`, 'acme', JSON.stringify({ maxConcurrentSteps: -1 }));
    await admin.hset(`${prefix}:gov:limits:v`, 'acme', 99);
    const bad = await rejectionOf(runSteps([a.kernel], 1, 1, () => 'acme'));
    expect(bad).to.be.instanceOf(TypeError);
    expect(String(bad)).to.match(/maxConcurrentSteps must be a positive integer/);
  });

  it("a worker SIGKILLed while it holds places gives them back when their leases run out", async () => {
    const prefix = testPrefix();
    const holder = await TestProcess.start(fixture('cap-holder-main.js'), [server.url, prefix, 'acme', '2', '1000']);
    closers.push(() => holder.kill());
    const provider = new UsageProvider();
    const { kernel } = await worker(prefix, provider, { leaseMs: 1_000 });
    kernel.tenants.define('acme', { limits: { maxConcurrentSteps: 2, onLimit: 'refuse' } });
    const refused = await rejectionOf(runSteps([kernel], 1, 1, () => 'acme'));
    expect(TenantLimitError.isInstance(refused)).to.equal(true);
    expect(refused).to.deep.include({ limit: 'maxConcurrentSteps', max: 2, current: 2 });
    await sleep(1_500);
    // Still held: the live holder renews its leases.
    expect(TenantLimitError.isInstance(await rejectionOf(runSteps([kernel], 1, 1, () => 'acme')))).to.equal(true);
    await holder.kill();
    const killedAt = Date.now();
    let admitted = false;
    while (!admitted) {
      try {
        await runSteps([kernel], 1, 1, () => 'acme');
        admitted = true;
      } catch (error) {
        if (!TenantLimitError.isInstance(error)) throw error;
        await sleep(50);
      }
    }
    expect(Date.now() - killedAt, 'back within about one lease').to.be.below(2_000);
    expect(provider.requests).to.equal(1);
  });

  it("holds a tenant to its budget from the shared ledger: the step that crosses it is a worker's last, and the other worker refuses at once", async () => {
    const prefix = testPrefix();
    const provider = new UsageProvider(); // 10 input and 2 output tokens a step: $0.00006 at 3 and 15 per million
    const workers = [await worker(prefix, provider), await worker(prefix, provider)];
    for (const { kernel } of workers) kernel.tenants.define('acme', { limits: { budget: { usd: 0.00025, per: 'day' } } });
    let admitted = 0;
    let refusal: unknown;
    while (refusal === undefined) {
      try {
        await runSteps([workers[0]!.kernel], 1, 1, () => 'acme');
        admitted++;
      } catch (error) {
        refusal = error;
      }
    }
    expect(admitted, 'four steps under the budget, and the fifth that crosses it').to.equal(5);
    expect(TenantBudgetExceededError.isInstance(refusal)).to.equal(true);
    const other = await rejectionOf(runSteps([workers[1]!.kernel], 1, 1, () => 'acme'));
    expect(TenantBudgetExceededError.isInstance(other)).to.equal(true);
    expect((other as TenantBudgetExceededError).spentUsd).to.be.closeTo(0.0003, 1e-12);
    expect(provider.requests).to.equal(5);
  });

  it('paces a tenant across two workers: requests per minute together, the rest refused with a TenantLimitError', async () => {
    const prefix = testPrefix();
    const provider = new UsageProvider();
    const workers = [await worker(prefix, provider), await worker(prefix, provider)];
    for (const { kernel } of workers) kernel.tenants.define('acme', { limits: { requestsPerMinute: 7, onLimit: 'refuse' } });
    const outcomes = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => runSteps([workers[i % 2]!.kernel], 1, 1, () => 'acme')));
    expect(provider.requests).to.equal(7);
    const refusals = outcomes.filter((o) => o.status === 'rejected').map((o) => (o as PromiseRejectedResult).reason as TenantLimitError);
    expect(refusals).to.have.length(13);
    for (const error of refusals) {
      expect(TenantLimitError.isInstance(error)).to.equal(true);
      expect(error.limit).to.equal('requestsPerMinute');
      expect(error.retryAfterMs).to.be.within(1, 60_000);
    }
  });
});

describe('Redis down at admission (RedisGovernance, real Redis stopped)', function () {
  this.timeout(60_000);
  const closers: (() => Promise<unknown>)[] = [];
  afterEach(() => closeAll(closers));

  for (const [what, limits] of [
    ['a cap', { maxConcurrentSteps: 2 }],
    ['a pacing limit', { tokensPerMinute: 10_000 }],
    ['a budget', { budget: { usd: 5, per: 'day' as const } }],
  ] as const) {
    it(`${what}: the step fails with a RedisUnavailableError within the reconnect window, and never reaches its provider`, async () => {
      const server = await RedisServer.start();
      closers.push(() => server.stop());
      const governance = new RedisGovernance({ connection: server.url, prefix: testPrefix(), reconnectWindowMs: 1_000 });
      closers.push(() => governance.close());
      const provider = new UsageProvider();
      const reports: HookErrorReport[] = [];
      const kernel = await governedKernel(provider, governance.kernelOptions, reports);
      closers.push(() => kernel.dispose());
      kernel.tenants.define('acme', { limits });
      await runSteps([kernel], 2, 1, () => 'acme'); // works while Redis is up
      expect(provider.requests).to.equal(2);
      await server.kill();
      const started = Date.now();
      const error = await rejectionOf(runSteps([kernel], 1, 1, () => 'acme'));
      expect(RedisUnavailableError.isInstance(error), String(error)).to.equal(true);
      expect((error as Error).message).to.match(/Tenant "acme"|Redis is unreachable/);
      expect(Date.now() - started, 'bounded by the reconnect window').to.be.below(6_000);
      expect(provider.requests).to.equal(2);
    });
  }

  it('Redis frozen (SIGSTOP): the admission fails with a RedisUnavailableError within the window, never hangs; after SIGCONT steps are admitted again', async () => {
    const server = await RedisServer.start();
    closers.push(() => server.stop());
    const governance = new RedisGovernance({ connection: server.url, prefix: testPrefix(), reconnectWindowMs: 1_000 });
    closers.push(() => governance.close());
    const provider = new UsageProvider();
    const kernel = await governedKernel(provider, governance.kernelOptions);
    closers.push(() => kernel.dispose());
    kernel.tenants.define('acme', { limits: { maxConcurrentSteps: 2, requestsPerMinute: 100, budget: { usd: 5, per: 'day' } } });
    await runSteps([kernel], 2, 1, () => 'acme');
    server.pause();
    try {
      const started = Date.now();
      const error = await rejectionOf(runSteps([kernel], 1, 1, () => 'acme'));
      expect(RedisUnavailableError.isInstance(error), String(error)).to.equal(true);
      expect((error as Error).message).to.match(/Tenant "acme".*Command timed out/);
      expect(Date.now() - started, 'bounded by the window (1 s), not by the freeze').to.be.below(4_000);
      expect(provider.requests).to.equal(2);
    } finally {
      server.resume();
    }
    await runSteps([kernel], 2, 1, () => 'acme');
    expect(provider.requests).to.equal(4);
  });

  it("a step whose record cannot be written still ends; the ledger's RedisUnavailableError goes to the HookErrorSink", async () => {
    const server = await RedisServer.start();
    closers.push(() => server.stop());
    const governance = new RedisGovernance({ connection: server.url, prefix: testPrefix(), reconnectWindowMs: 500 });
    closers.push(() => governance.close());
    const reports: HookErrorReport[] = [];
    const kernel = await governedKernel(new UsageProvider(), governance.kernelOptions, reports);
    closers.push(() => kernel.dispose());
    kernel.tenants.define('acme', {});
    await server.kill();
    await runSteps([kernel], 1, 1, () => 'acme');
    await until(() => reports.length === 1, 10_000, 'the report');
    expect(reports[0]).to.deep.include({ plugin: 'kosong.usage', hook: 'record', tenant: 'acme', kind: 'rejected' });
    expect(RedisUnavailableError.isInstance(reports[0]!.error)).to.equal(true);
  });
});

describe('the usage ledger across a Redis restart (SIGKILL, AOF always)', function () {
  this.timeout(120_000);

  it('loses no record whose write was acknowledged, and applies none twice', async () => {
    const server = await RedisServer.start({ persistent: true });
    const closers: (() => Promise<unknown>)[] = [() => server.stop()];
    try {
      const prefix = testPrefix();
      const ledger = new RedisUsageLedger({ connection: server.url, prefix, reconnectWindowMs: 10_000 });
      closers.push(() => ledger.close());
      const acknowledged: TokenUsage[] = [];
      const attempted: TokenUsage[] = [];
      const counting: UsageLedger = {
        record: (record) => {
          attempted.push(record.usage);
          return ledger.record(record).then(() => void acknowledged.push(record.usage));
        },
        query: (query) => ledger.query(query),
        spentUsd: (tenant, since) => ledger.spentUsd(tenant, since),
      };
      const reports: HookErrorReport[] = [];
      const kernel = await governedKernel(new UsageProvider(usageOfStep, 1), { usageLedger: counting }, reports);
      closers.push(() => kernel.dispose());
      kernel.tenants.define('acme', {});
      let stop = false;
      let n = 0;
      const load = Promise.all(
        Array.from({ length: 16 }, async () => {
          while (!stop) {
            const result = await kernel.runner({ tenant: 'acme' }).step({ systemPrompt: '', history: historyOf(`step ${n++}`) });
            await result.toolResults();
          }
        }),
      );
      await until(() => acknowledged.length > 500, 20_000, '500 records');
      await server.kill();
      const atKill = acknowledged.length;
      await sleep(1_000);
      await server.launch();
      await until(() => acknowledged.length > atKill + 500, 30_000, '500 more records after the restart');
      stop = true;
      await load;
      await until(() => acknowledged.length + reports.length === attempted.length, 20_000, 'every record settled');
      const [row] = await ledger.query({ tenant: 'acme' });
      const acked = sumOf(acknowledged);
      const tried = sumOf(attempted);
      expect(row!.steps).to.be.within(acknowledged.length, attempted.length);
      for (const field of ['inputOther', 'output', 'inputCacheRead', 'inputCacheCreation'] as const) {
        expect(row!.usage[field], field).to.be.within(acked[field], tried[field]);
      }
      // Those acknowledged are all there: what was not acknowledged failed (reported), none was applied twice.
      if (reports.length === 0) expect(row!.usage).to.deep.equal(acked);
    } finally {
      await closeAll(closers);
    }
  });
});
