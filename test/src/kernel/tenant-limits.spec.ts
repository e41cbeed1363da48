import { Kernel, TenantBudgetExceededError, TenantLimitError, UnknownTenantError, textPart, toolCall, tokenUsage } from '@kosong/core';
import type { TenantLimits } from '@kosong/core/kernel';
import { expect } from 'chai';
import sinon from 'sinon';
import { deferred, sleep } from '../support.js';
import { rejectionOf } from './support.js';
import { CountingProvider, countingToolset, historyOf, percentile, providerPlugin } from './limits-support.js';

const base = { systemPrompt: 'You are a test.' };

async function kernelWith(provider: CountingProvider, options: ConstructorParameters<typeof Kernel>[0] = {}): Promise<Kernel> {
  const kernel = new Kernel(options);
  await kernel.use(providerPlugin(provider));
  return kernel;
}

function expectTypeError(run: () => unknown, pattern: RegExp): void {
  let thrown: unknown;
  try {
    run();
  } catch (error) {
    thrown = error;
  }
  expect(thrown, 'expected a TypeError').to.be.instanceOf(TypeError);
  expect((thrown as Error).message).to.match(pattern);
}

describe('kernel: tenant limits', () => {
  afterEach(() => sinon.restore());

  describe('bad input is a TypeError, and changes nothing', () => {
    const bad: [string, unknown, RegExp][] = [
      ['a negative count', { requestsPerMinute: -1 }, /requestsPerMinute must be a positive integer/],
      ['zero', { maxConcurrentSteps: 0 }, /maxConcurrentSteps must be a positive integer/],
      ['NaN', { tokensPerMinute: Number.NaN }, /tokensPerMinute .* \(got NaN\)/],
      ['Infinity', { maxConcurrentToolCalls: Number.POSITIVE_INFINITY }, /maxConcurrentToolCalls .* \(got Infinity\)/],
      ['a fraction', { requestsPerMinute: 1.5 }, /requestsPerMinute/],
      ['an absurd count', { tokensPerMinute: 1e13 }, /at most 1000000000000/],
      ['a string', { requestsPerMinute: '10' }, /requestsPerMinute .* \(got "10"\)/],
      ['an unknown limit', { requestPerMinute: 10 }, /unknown limit "requestPerMinute"/],
      ['a negative budget', { budget: { usd: -1, per: 'day' } }, /budget\.usd must be a finite number/],
      ['a budget of Infinity', { budget: { usd: Number.POSITIVE_INFINITY, per: 'day' } }, /budget\.usd/],
      ['a budget per week', { budget: { usd: 1, per: 'week' } }, /budget\.per must be 'day' or 'month'/],
      ['an unknown budget field', { budget: { usd: 1, per: 'day', currency: 'EUR' } }, /unknown field "currency" in limits\.budget/],
      ['a bad policy', { onLimit: 'drop' }, /onLimit must be 'wait' or 'refuse'/],
      ['a negative wait', { maxWaitMs: -5 }, /maxWaitMs must be an integer/],
      ['an absurd wait', { maxWaitMs: 1e12 }, /maxWaitMs/],
      ['not an object', 5, /limits must be an object/],
    ];
    for (const [what, limits, pattern] of bad) {
      it(`${what}: define, setLimits, setDefaultLimits and new Kernel refuse it`, async () => {
        const kernel = await kernelWith(new CountingProvider());
        expectTypeError(() => kernel.tenants.define('acme', { limits: limits as TenantLimits }), pattern);
        expect(kernel.tenants.has('acme')).to.equal(false);
        kernel.tenants.define('acme', { limits: { maxConcurrentSteps: 2 } });
        expectTypeError(() => kernel.tenants.setLimits('acme', limits as TenantLimits), pattern);
        expect(kernel.tenants.limitsOf('acme')).to.deep.equal({ maxConcurrentSteps: 2 });
        expectTypeError(() => kernel.tenants.setDefaultLimits(limits as TenantLimits), pattern);
        expectTypeError(() => new Kernel({ limits: limits as TenantLimits }), pattern);
      });
    }

    it('limits are copied: changing the object given changes nothing', async () => {
      const kernel = await kernelWith(new CountingProvider());
      const limits = { maxConcurrentSteps: 2 };
      kernel.tenants.define('acme', { limits });
      limits.maxConcurrentSteps = 50;
      expect(kernel.tenants.limitsOf('acme')).to.deep.equal({ maxConcurrentSteps: 2 });
      expect(Object.isFrozen(kernel.tenants.limitsOf('acme'))).to.equal(true);
    });
  });

  describe('default limits', () => {
    it('apply to tenants without their own; {} opts out; setDefaultLimits changes them; steps without a tenant are not limited', async () => {
      const kernel = await kernelWith(new CountingProvider(), { limits: { maxConcurrentSteps: 3 } });
      kernel.tenants.define('plain');
      kernel.tenants.define('own', { limits: { maxConcurrentSteps: 1 } });
      kernel.tenants.define('free', { limits: {} });
      expect(kernel.tenants.limitsOf('plain')).to.deep.equal({ maxConcurrentSteps: 3 });
      expect(kernel.tenants.limitsOf('own')).to.deep.equal({ maxConcurrentSteps: 1 });
      expect(kernel.tenants.limitsOf('free')).to.equal(undefined);
      kernel.tenants.setDefaultLimits({ requestsPerMinute: 10 });
      expect(kernel.tenants.limitsOf('plain')).to.deep.equal({ requestsPerMinute: 10 });
      expect(kernel.tenants.limitsOf('own')).to.deep.equal({ maxConcurrentSteps: 1 });
      kernel.tenants.setLimits('own', undefined); // back to the default
      expect(kernel.tenants.limitsOf('own')).to.deep.equal({ requestsPerMinute: 10 });
      kernel.tenants.setDefaultLimits(undefined);
      expect(kernel.tenants.limitsOf('plain')).to.equal(undefined);
      const result = await kernel.runner().step({ ...base, history: historyOf('no tenant') });
      expect(result.message.content).to.deep.equal([textPart('ok')]);
    });

    it('a tenant without limits runs its steps on its own toolset, unwrapped', async () => {
      const provider = new CountingProvider([toolCall('c1', 'fake', '{}')]);
      const kernel = await kernelWith(provider);
      const tools = countingToolset(1);
      const handle = sinon.spy(tools, 'handle');
      kernel.tenants.define('acme', { toolset: tools });
      const result = await kernel.runner({ tenant: 'acme' }).step({ ...base, history: historyOf('x') });
      await result.toolResults();
      expect(handle.callCount).to.equal(1);
      expect(handle.firstCall.thisValue).to.equal(tools);
    });
  });

  describe('concurrency', () => {
    it('maxConcurrentSteps is never exceeded (counted at the provider), and queued steps run in arrival order', async () => {
      const provider = new CountingProvider([textPart('ok')], { delayMs: 2 });
      const kernel = await kernelWith(provider);
      kernel.tenants.define('acme', { limits: { maxConcurrentSteps: 3 } });
      const runner = kernel.runner({ tenant: 'acme' });
      const results = await Promise.all(Array.from({ length: 30 }, (_, i) => runner.step({ ...base, history: historyOf(`s${i}`) })));
      expect(results).to.have.length(30);
      expect(provider.maxActive).to.equal(3);
      expect(provider.starts.map((s) => s.tag)).to.deep.equal(Array.from({ length: 30 }, (_, i) => `s${i}`));
    });

    it('aborting a queued step releases its place: it rejects with the reason and never reaches the provider', async () => {
      const provider = new CountingProvider();
      const gate = deferred();
      provider.hold = gate.promise;
      const kernel = await kernelWith(provider);
      kernel.tenants.define('acme', { limits: { maxConcurrentSteps: 1 } });
      const runner = kernel.runner({ tenant: 'acme' });
      const first = runner.step({ ...base, history: historyOf('first') });
      const controller = new AbortController();
      const second = runner.step({ ...base, history: historyOf('second'), signal: controller.signal });
      const third = runner.step({ ...base, history: historyOf('third') });
      await sleep(5);
      expect(provider.starts.map((s) => s.tag)).to.deep.equal(['first']);
      const reason = new Error('user left');
      controller.abort(reason);
      expect(await rejectionOf(second)).to.equal(reason);
      gate.resolve();
      await Promise.all([first, third]);
      expect(provider.starts.map((s) => s.tag)).to.deep.equal(['first', 'third']);
      expect(provider.maxActive).to.equal(1);
    });

    it('an already aborted signal rejects at once with its reason', async () => {
      const provider = new CountingProvider();
      const kernel = await kernelWith(provider);
      kernel.tenants.define('acme', { limits: { maxConcurrentSteps: 1 } });
      const reason = new Error('gone');
      const error = await rejectionOf(kernel.runner({ tenant: 'acme' }).step({ ...base, history: historyOf('x'), signal: AbortSignal.abort(reason) }));
      expect(error).to.equal(reason);
      expect(provider.generateCalls).to.equal(0);
    });

    it("fair across tenants: one tenant flooding 1000 steps does not delay the other's 10 (p99 wait under one of its step durations)", async function () {
      this.timeout(20_000);
      const heavy = new CountingProvider([textPart('h')], { delayMs: 1 });
      // A light step streams 2 parts 10 ms apart (a real one takes seconds); a heavy one 1 part after 1 ms.
      const light = new CountingProvider([textPart('l'), textPart('m')], { delayMs: 10, modelName: 'light' });
      const kernel = new Kernel();
      await kernel.use(providerPlugin(heavy, 'heavy'), providerPlugin(light, 'light'));
      kernel.tenants.define('heavy', { provider: 'heavy', limits: { maxConcurrentSteps: 4 } });
      kernel.tenants.define('light', { provider: 'light', limits: { maxConcurrentSteps: 4 } });
      const flood = Array.from({ length: 1000 }, (_, i) => kernel.runner({ tenant: 'heavy' }).step({ ...base, history: historyOf(`h${i}`) }));
      await sleep(5); // the flood is queued
      const waits: number[] = [];
      const durations: number[] = [];
      // The light tenant's user sends one step after the other (its own queue stays empty: any wait is the flood's doing).
      for (let i = 0; i < 10; i++) {
        const asked = performance.now();
        const tag = `l${i}`;
        await kernel.runner({ tenant: 'light' }).step({ ...base, history: historyOf(tag) });
        const started = light.starts.find((s) => s.tag === tag)!.at;
        waits.push(started - asked);
        durations.push(performance.now() - started);
      }
      const heavyLeft = 1000 - heavy.starts.length;
      await Promise.all(flood);
      expect(heavyLeft, 'the light steps ran while the flood was still queued').to.be.greaterThan(0);
      expect(heavy.maxActive).to.equal(4);
      expect(light.maxActive).to.be.at.most(4);
      expect(percentile(waits, 99)).to.be.lessThan(Math.min(...durations));
    });

    it('maxConcurrentToolCalls holds over all of the tenant\'s steps (counted at the tool); every call still runs', async () => {
      const calls = Array.from({ length: 6 }, (_, i) => toolCall(`c${i}`, 'fake', '{}'));
      const provider = new CountingProvider(calls);
      const kernel = await kernelWith(provider);
      const tools = countingToolset(10);
      kernel.tenants.define('acme', { toolset: tools, limits: { maxConcurrentToolCalls: 2 } });
      const runner = kernel.runner({ tenant: 'acme' });
      const results = await Promise.all(
        Array.from({ length: 3 }, async (_, i) => (await runner.step({ ...base, history: historyOf(`s${i}`) })).toolResults()),
      );
      expect(tools.calls).to.equal(18);
      expect(tools.maxActive).to.equal(2);
      for (const stepResults of results) for (const result of stepResults) expect(result.returnValue.isError).to.equal(false);
    });

    it("a tool call queued for a place leaves the queue when its step's signal aborts", async () => {
      const provider = new CountingProvider([toolCall('a', 'fake', '{}'), toolCall('b', 'fake', '{}')]);
      const kernel = await kernelWith(provider);
      const tools = countingToolset(200);
      kernel.tenants.define('acme', { toolset: tools, limits: { maxConcurrentToolCalls: 1 } });
      const controller = new AbortController();
      const result = await kernel.runner({ tenant: 'acme' }).step({ ...base, history: historyOf('x'), signal: controller.signal });
      await sleep(10);
      controller.abort(new Error('stop'));
      await rejectionOf(result.toolResults());
      expect(tools.calls, 'the queued call never ran').to.equal(1);
    });

    it("with onLimit 'refuse', a step over the cap fails at once with a TenantLimitError (its fields)", async () => {
      const provider = new CountingProvider();
      const gate = deferred();
      provider.hold = gate.promise;
      const kernel = await kernelWith(provider);
      kernel.tenants.define('acme', { limits: { maxConcurrentSteps: 2, onLimit: 'refuse' } });
      const runner = kernel.runner({ tenant: 'acme' });
      const running = [runner.step({ ...base, history: historyOf('a') }), runner.step({ ...base, history: historyOf('b') })];
      const error = await rejectionOf(runner.step({ ...base, history: historyOf('c') }));
      expect(TenantLimitError.isInstance(error)).to.equal(true);
      expect(error).to.include({ tenant: 'acme', limit: 'maxConcurrentSteps', max: 2, current: 2, retryAfterMs: undefined, reason: 'refused', name: 'TenantLimitError' });
      expect((error as Error).message).to.equal('Tenant "acme" is over its limit maxConcurrentSteps = 2: 2 in use');
      gate.resolve();
      await Promise.all(running);
      expect(provider.generateCalls).to.equal(2);
    });

    it('a step that waits longer than maxWaitMs for a place fails with a TenantLimitError (timeout)', async () => {
      const provider = new CountingProvider();
      const gate = deferred();
      provider.hold = gate.promise;
      const kernel = await kernelWith(provider);
      kernel.tenants.define('acme', { limits: { maxConcurrentSteps: 1, maxWaitMs: 20 } });
      const runner = kernel.runner({ tenant: 'acme' });
      const first = runner.step({ ...base, history: historyOf('a') });
      const error = await rejectionOf(runner.step({ ...base, history: historyOf('b') }));
      expect(error).to.include({ limit: 'maxConcurrentSteps', reason: 'timeout', current: 1 });
      gate.resolve();
      await first;
    });
  });

  describe('pacing', () => {
    it('requestsPerMinute holds within 5 % over three minutes (fake clock), the waiting requests in order', async () => {
      const clock = sinon.useFakeTimers({ now: Date.UTC(2026, 0, 5, 10, 0, 0), toFake: ['setTimeout', 'clearTimeout', 'Date'] });
      const provider = new CountingProvider();
      const kernel = await kernelWith(provider);
      kernel.tenants.define('acme', { limits: { requestsPerMinute: 100, maxWaitMs: 600_000 } });
      const runner = kernel.runner({ tenant: 'acme' });
      const startedAt: number[] = [];
      const wrapped = provider.generate.bind(provider);
      provider.generate = (...args) => {
        startedAt.push(Date.now());
        return wrapped(...args);
      };
      const t0 = Date.now();
      const steps = Array.from({ length: 350 }, (_, i) => runner.step({ ...base, history: historyOf(`s${i}`) }));
      await clock.tickAsync(3 * 60_000 - 1);
      const inMinute = (m: number): number => startedAt.filter((at) => at >= t0 + m * 60_000 && at < t0 + (m + 1) * 60_000).length;
      expect([inMinute(0), inMinute(1), inMinute(2)]).to.deep.equal([100, 100, 100]);
      const rate = startedAt.length / 3;
      expect(Math.abs(rate - 100) / 100).to.be.at.most(0.05);
      await clock.tickAsync(60_000);
      await Promise.all(steps);
      expect(provider.starts.map((s) => s.tag)).to.deep.equal(Array.from({ length: 350 }, (_, i) => `s${i}`));
    });

    it("with onLimit 'refuse', a request over requestsPerMinute fails with its TenantLimitError (current use, retryAfterMs)", async () => {
      const clock = sinon.useFakeTimers({ now: Date.UTC(2026, 0, 5, 10, 0, 0), toFake: ['setTimeout', 'clearTimeout', 'Date'] });
      const provider = new CountingProvider();
      const kernel = await kernelWith(provider);
      kernel.tenants.define('acme', { limits: { requestsPerMinute: 3, onLimit: 'refuse' } });
      const runner = kernel.runner({ tenant: 'acme' });
      for (let i = 0; i < 3; i++) await runner.step({ ...base, history: historyOf(`s${i}`) });
      await clock.tickAsync(15_000);
      const error = await rejectionOf(runner.step({ ...base, history: historyOf('over') }));
      expect(TenantLimitError.isInstance(error)).to.equal(true);
      expect(error).to.include({ tenant: 'acme', limit: 'requestsPerMinute', max: 3, current: 3, reason: 'refused' });
      expect((error as TenantLimitError).retryAfterMs).to.be.within(44_000, 45_000);
      expect(provider.generateCalls).to.equal(3);
      await clock.tickAsync(45_001);
      await runner.step({ ...base, history: historyOf('next minute') });
      expect(provider.generateCalls).to.equal(4);
    });

    it('tokensPerMinute counts the estimate before the step and the real TokenUsage after it', async () => {
      sinon.useFakeTimers({ now: Date.UTC(2026, 0, 5, 10, 0, 0), toFake: ['setTimeout', 'clearTimeout', 'Date'] });
      const provider = new CountingProvider([textPart('ok')], { usage: tokenUsage({ inputOther: 10, output: 390 }) });
      const kernel = await kernelWith(provider);
      kernel.tenants.define('acme', { limits: { tokensPerMinute: 1000, onLimit: 'refuse' } });
      const runner = kernel.runner({ tenant: 'acme' });
      // Each request is estimated at ~5 tokens (its 16 characters of system prompt and 2 of history, / 4), then counts 400.
      for (let i = 0; i < 3; i++) await runner.step({ ...base, history: historyOf(`s${i}`) });
      const error = await rejectionOf(runner.step({ ...base, history: historyOf('s3') }));
      expect(error).to.include({ limit: 'tokensPerMinute', max: 1000, current: 1200, requested: 5, reason: 'refused' });
      expect(provider.generateCalls).to.equal(3);
    });

    it('over tokensPerMinute, a step waits for the next window (policy wait), then runs', async () => {
      const clock = sinon.useFakeTimers({ now: Date.UTC(2026, 0, 5, 10, 0, 0), toFake: ['setTimeout', 'clearTimeout', 'Date'] });
      const provider = new CountingProvider([textPart('ok')], { usage: tokenUsage({ inputOther: 100, output: 500 }) });
      const kernel = await kernelWith(provider);
      kernel.tenants.define('acme', { limits: { tokensPerMinute: 1000 } });
      const runner = kernel.runner({ tenant: 'acme' });
      await runner.step({ ...base, history: historyOf('a') });
      await runner.step({ ...base, history: historyOf('b') }); // 600 counted, then 1200
      let done = false;
      const third = runner.step({ ...base, history: historyOf('c') }).then(() => (done = true));
      await clock.tickAsync(59_000);
      expect(done).to.equal(false);
      expect(provider.generateCalls).to.equal(2);
      await clock.tickAsync(1_100);
      await third;
      expect(provider.generateCalls).to.equal(3);
    });

    it('real time: a wait longer than maxWaitMs is refused at once, with when to retry', async function () {
      this.timeout(5_000);
      const provider = new CountingProvider();
      const kernel = await kernelWith(provider);
      kernel.tenants.define('acme', { limits: { requestsPerMinute: 5, maxWaitMs: 1_000 } });
      const runner = kernel.runner({ tenant: 'acme' });
      const started = performance.now();
      const outcomes = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => runner.step({ ...base, history: historyOf(`s${i}`) })));
      const elapsed = performance.now() - started;
      expect(outcomes.filter((o) => o.status === 'fulfilled')).to.have.length(5);
      const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as TenantLimitError] : []));
      expect(refused).to.have.length(3);
      for (const error of refused) {
        expect(error).to.include({ limit: 'requestsPerMinute', current: 5, reason: 'refused' });
        expect(error.retryAfterMs).to.be.within(58_000, 60_000);
      }
      expect(elapsed, 'not waited for').to.be.lessThan(500);
      expect(provider.generateCalls).to.equal(5);
    });
  });

  describe('budget', () => {
    const prices = { 'mock/mock': { input: 10, output: 10 } }; // $0.002 per step of 200 tokens

    it('the step that crosses the budget is the last admitted; the next is refused with TenantBudgetExceededError', async () => {
      sinon.useFakeTimers({ now: Date.UTC(2026, 0, 5, 10, 0, 0), toFake: ['Date'] });
      const provider = new CountingProvider([textPart('ok')], { usage: tokenUsage({ inputOther: 100, output: 100 }) });
      const kernel = await kernelWith(provider, { prices });
      kernel.tenants.define('acme', { limits: { budget: { usd: 0.005, per: 'day' } } });
      const runner = kernel.runner({ tenant: 'acme' });
      for (let i = 0; i < 3; i++) await runner.step({ ...base, history: historyOf(`s${i}`) }); // 0.002, 0.004, then 0.006 (crosses)
      const error = await rejectionOf(runner.step({ ...base, history: historyOf('over') }));
      expect(TenantBudgetExceededError.isInstance(error)).to.equal(true);
      const budgetError = error as TenantBudgetExceededError;
      expect(budgetError).to.include({ tenant: 'acme', budgetUsd: 0.005, per: 'day', reason: 'spent', retryAfterMs: 14 * 3_600_000 });
      expect(budgetError.spentUsd).to.be.closeTo(0.006, 1e-12);
      expect(provider.generateCalls).to.equal(3);
      expect(budgetError.message).to.equal('Tenant "acme" has spent $0.006 of its budget of $0.005 per day; it renews in 50400000 ms');
      // Another tenant's spend is its own.
      kernel.tenants.define('globex', { limits: { budget: { usd: 0.005, per: 'day' } } });
      await kernel.runner({ tenant: 'globex' }).step({ ...base, history: historyOf('g') });
    });

    it('the budget renews with the period (UTC month)', async () => {
      const clock = sinon.useFakeTimers({ now: Date.UTC(2026, 0, 31, 23, 0, 0), toFake: ['Date'] });
      const provider = new CountingProvider([textPart('ok')], { usage: tokenUsage({ inputOther: 100, output: 100 }) });
      const kernel = await kernelWith(provider, { prices });
      kernel.tenants.define('acme', { limits: { budget: { usd: 0.001, per: 'month' } } });
      const runner = kernel.runner({ tenant: 'acme' });
      await runner.step({ ...base, history: historyOf('a') });
      const error = await rejectionOf(runner.step({ ...base, history: historyOf('b') }));
      expect(error).to.include({ per: 'month', retryAfterMs: 3_600_000 });
      clock.tick(3_600_000);
      await runner.step({ ...base, history: historyOf('february') });
      expect(provider.generateCalls).to.equal(2);
    });

    it("kernel.agent(): each step of a turn is admitted; the turn ends with the budget's error, the crossing step its last", async () => {
      const provider = new CountingProvider([toolCall('c', 'fake', '{}')], { usage: tokenUsage({ inputOther: 100, output: 100 }) });
      const kernel = await kernelWith(provider, { prices });
      kernel.tenants.define('acme', { toolset: countingToolset(1), limits: { budget: { usd: 0.003, per: 'day' } } });
      const error = await rejectionOf(kernel.agent({ tenant: 'acme', systemPrompt: 'go on' }).run('go'));
      expect(TenantBudgetExceededError.isInstance(error), String(error)).to.equal(true);
      expect(provider.generateCalls).to.equal(2);
      const [row] = await kernel.usage.query({ tenant: 'acme' });
      expect(row).to.deep.include({ steps: 2, unknownCostSteps: 0 });
    });

    it('a budget cannot hold a model without a price: its step is refused, naming the model', async () => {
      const provider = new CountingProvider([textPart('ok')], { modelName: 'no-such-model', usage: tokenUsage({ output: 1 }) });
      const kernel = await kernelWith(provider);
      kernel.tenants.define('acme', { limits: { budget: { usd: 100, per: 'day' } } });
      const error = await rejectionOf(kernel.runner({ tenant: 'acme' }).step({ ...base, history: historyOf('x') }));
      expect(error).to.include({ reason: 'unpriced', model: 'mock/no-such-model', spentUsd: 0 });
      expect(provider.generateCalls).to.equal(0);
    });

    it('a running step is not cut off by its budget: steps admitted before the crossing finish', async () => {
      const provider = new CountingProvider([textPart('a'), textPart('b')], { usage: tokenUsage({ inputOther: 1000, output: 1000 }), delayMs: 5 });
      const kernel = await kernelWith(provider, { prices });
      kernel.tenants.define('acme', { limits: { budget: { usd: 0.001, per: 'day' } } });
      const runner = kernel.runner({ tenant: 'acme' });
      const results = await Promise.all([1, 2, 3].map((i) => runner.step({ ...base, history: historyOf(`s${i}`) })));
      for (const result of results) expect(result.message.content).to.deep.equal([textPart('ab')]);
      const error = await rejectionOf(runner.step({ ...base, history: historyOf('over') }));
      expect(error).to.include({ reason: 'spent' });
      expect((error as TenantBudgetExceededError).spentUsd).to.be.closeTo(0.06, 1e-12);
    });
  });

  describe('changes under load, removal, redefinition', () => {
    it('a limit change under load takes effect at the next admission', async () => {
      const provider = new CountingProvider();
      let gate = deferred();
      provider.hold = gate.promise;
      const kernel = await kernelWith(provider);
      kernel.tenants.define('acme', { limits: { maxConcurrentSteps: 1 } });
      const runner = kernel.runner({ tenant: 'acme' });
      const steps = Array.from({ length: 6 }, (_, i) => runner.step({ ...base, history: historyOf(`s${i}`) }));
      await sleep(5);
      expect(provider.active).to.equal(1);
      kernel.tenants.setLimits('acme', { maxConcurrentSteps: 4 });
      await sleep(5);
      expect(provider.active, 'the queued steps are let in at once').to.equal(4);
      kernel.tenants.setLimits('acme', { maxConcurrentSteps: 2 });
      const release = gate;
      gate = deferred();
      provider.hold = gate.promise;
      release.resolve();
      await sleep(10);
      expect(provider.active, 'after the 4 running ones, at most 2').to.equal(2);
      gate.resolve();
      await Promise.all(steps);
      expect(provider.generateCalls).to.equal(6);
    });

    it('removing a tenant fails its queued steps with UnknownTenantError; running ones finish; a redefinition has its new limits and keeps its spend', async () => {
      const provider = new CountingProvider([textPart('ok')], { usage: tokenUsage({ inputOther: 100, output: 100 }) });
      const gate = deferred();
      provider.hold = gate.promise;
      const kernel = await kernelWith(provider, { prices: { 'mock/mock': { input: 10, output: 10 } } });
      kernel.tenants.define('acme', { limits: { maxConcurrentSteps: 1 } });
      const runner = kernel.runner({ tenant: 'acme' });
      const running = runner.step({ ...base, history: historyOf('running') });
      const queued = runner.step({ ...base, history: historyOf('queued') });
      await sleep(5);
      const removed = kernel.tenants.remove('acme');
      const error = await rejectionOf(queued);
      expect(UnknownTenantError.isInstance(error)).to.equal(true);
      gate.resolve();
      await running;
      await removed;
      provider.hold = undefined;
      kernel.tenants.define('acme', { limits: { budget: { usd: 0.003, per: 'day' } } });
      expect(kernel.tenants.limitsOf('acme')).to.deep.equal({ budget: { usd: 0.003, per: 'day' } });
      const again = kernel.runner({ tenant: 'acme' });
      await again.step({ ...base, history: historyOf('one more') }); // the old generation's step spent 0.002 of 0.003; this one crosses
      expect(await rejectionOf(again.step({ ...base, history: historyOf('over') }))).to.include({ reason: 'spent' });
    });

    it('removing a tenant ends the pacing wait of its queued steps', async () => {
      const provider = new CountingProvider();
      const kernel = await kernelWith(provider);
      kernel.tenants.define('acme', { limits: { requestsPerMinute: 1, maxWaitMs: 120_000 } });
      const runner = kernel.runner({ tenant: 'acme' });
      await runner.step({ ...base, history: historyOf('a') });
      const waiting = runner.step({ ...base, history: historyOf('b') });
      await sleep(5);
      const started = performance.now();
      await kernel.tenants.remove('acme');
      expect(UnknownTenantError.isInstance(await rejectionOf(waiting))).to.equal(true);
      expect(performance.now() - started).to.be.lessThan(1_000);
    });
  });
});
