import { expect } from 'chai';
import sinon from 'sinon';
import { ConcurrencyGate } from '../governance/concurrency-gate.js';
import { Pricing, costOf } from '../governance/pricing.js';
import { RatePacer } from '../governance/rate-pacer.js';
import { estimateRequestTokens, MEDIA_PART_TOKENS } from '../governance/token-estimate.js';
import { MemoryUsageLedger, periodOf } from '../governance/usage-ledger.js';
import { TenantGovernor, type Admission, type AdmissionRequest } from '../governance/admission.js';
import { TenantBudgetExceededError } from '../governance/limit-errors.js';
import type { ChatProvider } from '../provider/chat-provider.js';
import { tokenUsage } from '../provider/token-usage.js';

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('governance: ConcurrencyGate', () => {
  it('lets in up to its cap at once, then queues in FIFO order', async () => {
    const gate = new ConcurrencyGate(2);
    expect(gate.tryAcquire()).to.equal(true);
    expect(gate.tryAcquire()).to.equal(true);
    expect(gate.tryAcquire()).to.equal(false);
    const order: number[] = [];
    const waits = [1, 2, 3].map((i) => gate.acquire(undefined, 10_000, () => new Error('timeout')).then(() => order.push(i)));
    expect(gate.waiting).to.equal(3);
    gate.release();
    await flush();
    expect(order).to.deep.equal([1]);
    expect(gate.tryAcquire(), 'nobody jumps the queue').to.equal(false);
    gate.release();
    gate.release();
    await Promise.all(waits);
    expect(order).to.deep.equal([1, 2, 3]);
    expect(gate.active).to.equal(2);
  });

  it('an aborted waiter leaves the queue with its reason; the next one gets the place', async () => {
    const gate = new ConcurrencyGate(1);
    gate.tryAcquire();
    const controller = new AbortController();
    const first = gate.acquire(controller.signal, 10_000, () => new Error('timeout'));
    const second = gate.acquire(undefined, 10_000, () => new Error('timeout'));
    const reason = new Error('gone');
    controller.abort(reason);
    expect(await first.catch((error: unknown) => error)).to.equal(reason);
    expect(gate.waiting).to.equal(1);
    gate.release();
    await second;
    expect(gate.active).to.equal(1);
    expect(gate.waiting).to.equal(0);
  });

  it('a waiter past its deadline rejects with the error it made; a raised cap lets waiters in; close rejects them all', async () => {
    const clock = sinon.useFakeTimers();
    try {
      const gate = new ConcurrencyGate(1);
      gate.tryAcquire();
      const late = gate.acquire(undefined, 50, () => new Error('waited too long'));
      const caught = late.catch((error: unknown) => error);
      await clock.tickAsync(50);
      expect(((await caught) as Error).message).to.equal('waited too long');
      const a = gate.acquire(undefined, 1_000, () => new Error('timeout'));
      const b = gate.acquire(undefined, 1_000, () => new Error('timeout'));
      gate.setCap(3);
      await Promise.all([a, b]);
      expect(gate.active).to.equal(3);
      const c = gate.acquire(undefined, 1_000, () => new Error('timeout')).catch((error: unknown) => error);
      const closed = new Error('closed');
      gate.close(closed);
      expect(await c).to.equal(closed);
      expect(await gate.acquire(undefined, 1_000, () => new Error('timeout')).catch((error: unknown) => error)).to.equal(closed);
    } finally {
      clock.restore();
    }
  });
});

describe('governance: RatePacer', () => {
  let clock: sinon.SinonFakeTimers;
  beforeEach(() => {
    clock = sinon.useFakeTimers({ now: 1_000_000, toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  });
  afterEach(() => clock.restore());

  it('takes up to its limit per minute; refuses (giving the refused points back) or waits for the next window', async () => {
    const pacer = new RatePacer(10, 'acme');
    expect(await pacer.take(6, undefined, undefined, false, 0)).to.equal(undefined);
    const refused = await pacer.take(6, undefined, undefined, false, 0);
    expect(refused).to.deep.equal({ current: 6, retryAfterMs: 60_000, reason: 'refused' });
    expect(await pacer.current()).to.equal(6);
    const waited = pacer.take(6, undefined, undefined, true, 120_000);
    await clock.tickAsync(60_000);
    expect(await waited).to.equal(undefined);
    expect(await pacer.current()).to.equal(6);
  });

  it('clamps a request larger than the limit, and corrects counts within the window only', async () => {
    const pacer = new RatePacer(10, 'acme');
    expect(await pacer.take(50, undefined, undefined, false, 0)).to.equal(undefined);
    expect(await pacer.current()).to.equal(10);
    await pacer.adjust(-4);
    expect(await pacer.current()).to.equal(6);
    await clock.tickAsync(60_001);
    await pacer.adjust(-4); // the window closed: nothing to give back, no window below zero
    expect(await pacer.current()).to.equal(0);
    expect(await pacer.take(10, undefined, undefined, false, 0)).to.equal(undefined);
  });

  it('waiters go in arrival order; one whose signal aborts leaves, and the next one takes its turn', async () => {
    const pacer = new RatePacer(2, 'acme');
    await pacer.take(2, undefined, undefined, false, 0);
    const controller = new AbortController();
    const order: string[] = [];
    const first = pacer.take(1, controller.signal, undefined, true, 120_000).then(() => order.push('first'), (error: unknown) => order.push(`first: ${(error as Error).message}`));
    const big = pacer.take(2, undefined, undefined, true, 120_000).then(() => order.push('big'));
    const small = pacer.take(1, undefined, undefined, true, 120_000).then(() => order.push('small'));
    await clock.tickAsync(10);
    controller.abort(new Error('gone'));
    await first;
    await clock.tickAsync(60_000);
    await big;
    expect(order, 'the small one does not overtake the big one').to.deep.equal(['first: gone', 'big']);
    await clock.tickAsync(60_000);
    await small;
    expect(order).to.deep.equal(['first: gone', 'big', 'small']);
  });

  it('a new limit applies at the next take, the window kept', async () => {
    const pacer = new RatePacer(5, 'acme');
    await pacer.take(5, undefined, undefined, false, 0);
    pacer.setMax(8);
    expect(await pacer.take(3, undefined, undefined, false, 0)).to.equal(undefined);
    expect(await pacer.take(1, undefined, undefined, false, 0)).to.deep.include({ current: 8 });
  });
});

describe('governance: RatePacer credit (points taken ahead, with its own limiter)', () => {
  let clock: sinon.SinonFakeTimers;
  beforeEach(() => {
    clock = sinon.useFakeTimers({ now: 1_000_000, toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  });
  afterEach(() => clock.restore());

  it('takes points ahead once the room is known; later takes use them at once; a take is refused exactly when it would be without them', async () => {
    const pacer = new RatePacer(100, 'acme');
    expect(pacer.tryTakeNow(1), 'no credit before the first take').to.equal(false);
    expect(await pacer.take(1, undefined, undefined, false, 0)).to.equal(undefined); // the window opens: its room is learnt
    expect(await pacer.take(1, undefined, undefined, false, 0)).to.equal(undefined); // and 12 taken ahead (an eighth of 98)
    for (let i = 0; i < 12; i++) expect(pacer.tryTakeNow(1), `take ${i} from the credit`).to.equal(true);
    expect(pacer.tryTakeNow(1), 'the credit is used up').to.equal(false);
    expect(await pacer.current()).to.equal(14);
    // The window counts 14: 86 more fit, 87 do not (the credit, if any, is part of the count).
    expect(await pacer.take(87, undefined, undefined, false, 0)).to.deep.equal({ current: 14, retryAfterMs: 60_000, reason: 'refused' });
    expect(await pacer.take(80, undefined, undefined, false, 0)).to.equal(undefined);
    expect(await pacer.current()).to.equal(94);
    expect(await pacer.take(7, undefined, undefined, false, 0)).to.deep.include({ current: 94, reason: 'refused' });
    expect(await pacer.take(6, undefined, undefined, false, 0)).to.equal(undefined);
    expect(await pacer.current()).to.equal(100);
    expect(pacer.tryTakeNow(1)).to.equal(false);
    expect(await pacer.take(1, undefined, undefined, false, 0)).to.deep.include({ current: 100, reason: 'refused' });
  });

  it('the credit ends with its window; corrections draw on it, and give back to it within the window of their take only; a lower limit gives it back', async () => {
    const pacer = new RatePacer(1_000, 'acme');
    await pacer.take(10, undefined, undefined, false, 0);
    await pacer.take(10, undefined, undefined, false, 0); // 122 ahead (an eighth of the 980 left)
    const mark = pacer.windowMark;
    expect(await pacer.current()).to.equal(20);
    expect(pacer.adjustNow(100, mark), 'more tokens than estimated, from the credit').to.equal(true);
    expect(await pacer.current()).to.equal(120);
    expect(pacer.adjustNow(-30, mark), 'fewer, given back to the credit').to.equal(true);
    expect(await pacer.current()).to.equal(90);
    expect(pacer.adjustNow(-30, mark - 1), 'not the window of its take: not given back').to.equal(false);
    expect(pacer.adjustNow(500, mark), 'more than the credit: for the limiter').to.equal(false);
    pacer.setMax(500);
    expect(pacer.tryTakeNow(1), 'a lower limit gives the credit back').to.equal(false);
    await clock.tickAsync(0);
    expect(await pacer.current()).to.equal(90);
    pacer.setMax(1_000);
    await pacer.take(1, undefined, undefined, false, 0); // takes ahead again
    expect(pacer.tryTakeNow(1)).to.equal(true);
    await clock.tickAsync(60_000);
    expect(pacer.tryTakeNow(1), 'the window closed: its credit with it').to.equal(false);
    expect(pacer.adjustNow(-5, pacer.windowMark), 'nothing given back to a closed window').to.equal(false);
    expect(await pacer.current()).to.equal(0);
  });
});

describe('governance: admission in memory without a promise', () => {
  const provider = { name: 'p', modelName: 'm' } as ChatProvider;
  const request: AdmissionRequest = { provider, systemPrompt: 'You are a test.', tools: [], history: [], signal: undefined };
  const usage = tokenUsage({ inputOther: 40, output: 10 });
  const host = () => ({ ledger: new MemoryUsageLedger(), pricing: new Pricing({ 'p/m': { input: 1, output: 1 } }), limitStore: undefined });

  it('with room under every limit, a step is admitted synchronously; over a cap it queues, over the budget it is refused', async () => {
    const context = host();
    const governor = new TenantGovernor('acme', { requestsPerMinute: 10_000, tokensPerMinute: 10_000_000, maxConcurrentSteps: 2, maxConcurrentToolCalls: 2, budget: { usd: 0.01, per: 'day' } }, context);
    let sync = 0;
    for (let i = 0; i < 100; i++) {
      const admitted = governor.admit(request);
      if (!(admitted instanceof Promise)) sync++;
      const admission: Admission = admitted instanceof Promise ? await admitted : admitted;
      admission.end(usage);
      context.ledger.add('acme', 'p', 'm', usage, 0.00005, Date.now());
    }
    expect(sync, 'steps admitted without a promise, of 100').to.be.at.least(95);
    const a = governor.admit(request) as Admission;
    const b = governor.admit(request) as Admission;
    expect(a).not.to.be.instanceOf(Promise);
    expect(b).not.to.be.instanceOf(Promise);
    const c = governor.admit(request);
    expect(c, 'over the cap: queued').to.be.instanceOf(Promise);
    expect(governor.queuedSteps).to.equal(1);
    a.end(usage);
    (await c).end(usage);
    b.end(usage);
    // $0.005 spent so far: $0.006 more pass the budget of $0.01; the next step is refused (the slow path's error).
    context.ledger.add('acme', 'p', 'm', usage, 0.006, Date.now());
    const refused = governor.admit(request);
    expect(refused).to.be.instanceOf(Promise);
    const error = await (refused as Promise<Admission>).then(() => undefined, (e: unknown) => e);
    expect(TenantBudgetExceededError.isInstance(error)).to.equal(true);
  });
});

describe('governance: estimates, prices and periods', () => {
  it('estimates a request at its characters / 4, plus a fixed count per media part', () => {
    const tools = [{ name: 'add', description: 'Adds.', parameters: { type: 'object' } }];
    const history = [
      { role: 'user' as const, content: [{ type: 'text' as const, text: 'x'.repeat(40) }, { type: 'image_url' as const, imageUrl: { url: 'data:image/png;base64,AAAA' } }] },
      { role: 'assistant' as const, content: [{ type: 'think' as const, think: 'y'.repeat(8) }], toolCalls: [{ type: 'function' as const, id: 'c', function: { name: 'add', arguments: '{"a":1}' } }] },
    ];
    const chars = 12 + (3 + 5 + JSON.stringify({ type: 'object' }).length) + 40 + 8 + 3 + 7;
    expect(estimateRequestTokens('s'.repeat(12), tools, history)).to.equal(Math.ceil(chars / 4) + MEDIA_PART_TOKENS);
    expect(estimateRequestTokens('', [], [])).to.equal(0);
  });

  it('costs a usage at its price per million tokens, cache prices defaulting to the input price', () => {
    const usage = tokenUsage({ inputOther: 1_000_000, inputCacheRead: 1_000_000, inputCacheCreation: 1_000_000, output: 1_000_000 });
    expect(costOf(usage, { input: 2, output: 8 })).to.be.closeTo(2 + 2 + 2 + 8, 1e-12);
    expect(costOf(usage, { input: 2, output: 8, cacheRead: 0.5, cacheWrite: 2.5 })).to.be.closeTo(2 + 0.5 + 2.5 + 8, 1e-12);
  });

  it('prices from the table (provider/model, then the model), then from the catalog; unknown models have none', () => {
    const pricing = new Pricing({ 'openai/gpt-4o': { input: 1, output: 1 }, 'my-model': { input: 3, output: 4 } });
    expect(pricing.priceOf('openai', 'gpt-4o')).to.deep.equal({ input: 1, output: 1 });
    expect(pricing.priceOf('anything', 'my-model')).to.deep.equal({ input: 3, output: 4 });
    expect(pricing.priceOf('openai-responses', 'gpt-4o')).to.deep.equal({ input: 2.5, output: 10, cacheRead: 1.25 });
    expect(pricing.priceOf('anthropic', 'claude-3-5-haiku-20241022')).to.have.property('cacheWrite');
    expect(pricing.priceOf('mock', 'openai/gpt-4o'), "the table's key read as a model name").to.deep.equal({ input: 1, output: 1 });
    expect(new Pricing().priceOf('mock', 'openai/gpt-4o'), "the model's prefix names the catalog's provider").to.deep.equal({ input: 2.5, output: 10, cacheRead: 1.25 });
    expect(new Pricing().priceOf('kimi', 'kimi-k2-turbo-preview')).to.have.property('input');
    expect(pricing.priceOf('openai', 'no-such-model')).to.equal(undefined);
    expect(pricing.priceOf('no-such-provider', 'gpt-4o')).to.equal(undefined);
  });

  it('gives the UTC day and month holding a time', () => {
    const now = Date.UTC(2026, 1, 28, 13, 30);
    expect(periodOf('day', now)).to.deep.equal({ start: Date.UTC(2026, 1, 28), end: Date.UTC(2026, 2, 1) });
    expect(periodOf('month', now)).to.deep.equal({ start: Date.UTC(2026, 1, 1), end: Date.UTC(2026, 2, 1) });
    expect(periodOf('month', Date.UTC(2026, 11, 31, 23))).to.deep.equal({ start: Date.UTC(2026, 11, 1), end: Date.UTC(2027, 0, 1) });
  });
});
