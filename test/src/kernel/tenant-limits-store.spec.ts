import { Kernel, TenantBudgetExceededError, TenantLimitError, textPart, tokenUsage, toolCall } from '@kosong/core';
import { RatePacer, type CapGate, type CapKind, type LimitStore, type Pacer, type PaceKind } from '@kosong/core/kernel';
import { expect } from 'chai';
import { rejectionOf } from './support.js';
import { CountingProvider, countingToolset, historyOf, providerPlugin } from './limits-support.js';

const base = { systemPrompt: 'You are a test.' };

/**
 * A store that answers every attempt with a promise, as a shared one does: its counts are one
 * object per tenant and kind, which two kernels given the same store share (as processes share Redis).
 */
class AsyncStore implements LimitStore {
  readonly holders = new Map<string, number>();
  /** The most places held at once, per tenant and kind. */
  readonly maxHeld = new Map<string, number>();
  readonly gates: { tenant: string; kind: CapKind }[] = [];
  readonly pacers: { tenant: string; kind: PaceKind; max: number }[] = [];
  readonly #pacers = new Map<string, RatePacer>();

  capGate(tenant: string, kind: CapKind, cap: number | undefined): CapGate {
    this.gates.push({ tenant, kind });
    const key = `${tenant}:${kind}`;
    const holders = this.holders;
    const count = (): number => holders.get(key) ?? 0;
    const take = (gate: { cap: number | undefined }): boolean => {
      if (gate.cap !== undefined && count() >= gate.cap) return false;
      holders.set(key, count() + 1);
      this.maxHeld.set(key, Math.max(this.maxHeld.get(key) ?? 0, count()));
      return true;
    };
    const gate = {
      cap,
      waiting: 0,
      get active() {
        return count();
      },
      setCap(next: number | undefined) {
        gate.cap = next;
      },
      tryAcquire: () => Promise.resolve().then(() => take(gate)),
      acquire: async (signal: AbortSignal | undefined, maxWaitMs: number, timeout: () => Error) => {
        const deadline = Date.now() + maxWaitMs;
        gate.waiting++;
        try {
          while (!take(gate)) {
            signal?.throwIfAborted();
            if (Date.now() > deadline) throw timeout();
            await new Promise((resolve) => setTimeout(resolve, 2));
          }
        } finally {
          gate.waiting--;
        }
      },
      release: () => void holders.set(key, count() - 1),
      close: () => undefined,
    };
    return gate;
  }

  pacer(tenant: string, kind: PaceKind, max: number): Pacer {
    this.pacers.push({ tenant, kind, max });
    const key = `${tenant}:${kind}`;
    let pacer = this.#pacers.get(key);
    if (pacer === undefined) this.#pacers.set(key, (pacer = new RatePacer(max, key)));
    return pacer;
  }
}

/** What a step asks of a store at once (core's `StepAsk`). */
type StepAsk = Parameters<NonNullable<LimitStore['admitStep']>>[0];

/**
 * A store that admits a step at once ({@link LimitStore.admitStep}) while `room` says so, and
 * records what it was asked and how each grant ended.
 */
class AtOnceStore extends AsyncStore {
  room = true;
  readonly asks: StepAsk[] = [];
  /** The token deltas of the grants that ended, and how many were withdrawn. */
  readonly ends: number[] = [];
  withdrawn = 0;

  admitStep(ask: StepAsk): Promise<{ end(tokenDelta: number): void; withdraw(): void } | undefined> {
    this.asks.push(ask);
    if (!this.room) return Promise.resolve(undefined);
    return Promise.resolve({ end: (delta: number) => void this.ends.push(delta), withdraw: () => void this.withdrawn++ });
  }
}

async function kernelOn(store: LimitStore, provider: CountingProvider, prices: Record<string, { input: number; output: number }> = {}): Promise<Kernel> {
  const kernel = new Kernel({ limitStore: store, prices });
  await kernel.use(providerPlugin(provider));
  return kernel;
}

describe('kernel: tenant limits counted in a LimitStore (KernelOptions.limitStore)', () => {
  it('a store that is no LimitStore is a TypeError', () => {
    expect(() => new Kernel({ limitStore: {} as LimitStore })).to.throw(TypeError, /limitStore must be a LimitStore/);
    expect(() => new Kernel({ limitStore: { ...new AsyncStore(), capGate: () => undefined as never, pacer: () => undefined as never, admitStep: 5 } as unknown as LimitStore })).to.throw(
      TypeError,
      /admitStep must be a function/,
    );
  });

  it('a store with admitStep admits a step against every limit at once; its gate and pacers are not asked, and the end carries the token correction', async () => {
    const store = new AtOnceStore();
    const provider = new CountingProvider([textPart('ok')], { usage: tokenUsage({ inputOther: 100, output: 50 }) });
    const kernel = await kernelOn(store, provider, { 'mock/mock': { input: 1, output: 1 } });
    kernel.tenants.define('acme', { limits: { maxConcurrentSteps: 2, requestsPerMinute: 10, tokensPerMinute: 100_000, budget: { usd: 5, per: 'day' } } });
    const result = await kernel.runner({ tenant: 'acme' }).step({ ...base, history: historyOf('one') });
    await result.toolResults();
    expect(store.asks).to.have.length(1);
    const [ask] = store.asks;
    expect(ask!.tenant).to.equal('acme');
    expect(ask!.steps?.cap).to.equal(2);
    expect(ask!.requests?.max).to.equal(10);
    expect(ask!.tokens?.max).to.equal(100_000);
    expect(ask!.tokenPoints).to.be.above(0);
    expect(ask!.budget).to.deep.include({ usd: 5, ledger: kernel.usage });
    expect(ask!.budget!.since).to.equal(Math.floor(Date.now() / 86_400_000) * 86_400_000);
    // Nothing was taken of the store's own gate and pacers.
    expect(store.holders.get('acme:steps') ?? 0).to.equal(0);
    expect(store.maxHeld.get('acme:steps')).to.equal(undefined);
    // The real usage (150 tokens) minus what was taken (the estimate).
    expect(store.ends).to.deep.equal([150 - ask!.tokenPoints]);
    expect(provider.starts).to.have.length(1);
    await kernel.dispose();
  });

  it('when admitStep has no room, the step is admitted limit by limit; a model without a price is refused by the budget without asking it', async () => {
    const store = new AtOnceStore();
    store.room = false;
    const provider = new CountingProvider();
    const kernel = await kernelOn(store, provider);
    kernel.tenants.define('acme', { limits: { maxConcurrentSteps: 1, requestsPerMinute: 10 } });
    await (await kernel.runner({ tenant: 'acme' }).step({ ...base, history: historyOf('one') })).toolResults();
    expect(store.asks).to.have.length(1);
    expect(store.maxHeld.get('acme:steps'), 'the gate of the store took the place').to.equal(1);
    expect(store.holders.get('acme:steps')).to.equal(0);
    expect(store.ends).to.deep.equal([]);
    kernel.tenants.define('unpriced', { limits: { maxConcurrentSteps: 1, budget: { usd: 5, per: 'day' } } });
    store.room = true;
    const refused = await rejectionOf(kernel.runner({ tenant: 'unpriced' }).step({ ...base, history: historyOf('two') }));
    expect(TenantBudgetExceededError.isInstance(refused)).to.equal(true);
    expect(store.asks).to.have.length(1);
    expect(provider.starts).to.have.length(1);
    await kernel.dispose();
  });

  it('a step whose signal aborted while admitStep answered is withdrawn, and never reaches the provider', async () => {
    const controller = new AbortController();
    const store = new AtOnceStore();
    const admit = store.admitStep.bind(store);
    store.admitStep = (ask) => {
      controller.abort(new Error('gone'));
      return admit(ask);
    };
    const provider = new CountingProvider();
    const kernel = await kernelOn(store, provider);
    kernel.tenants.define('acme', { limits: { requestsPerMinute: 10 } });
    const error = await rejectionOf(kernel.runner({ tenant: 'acme' }).step({ ...base, history: historyOf('one'), signal: controller.signal }));
    expect((error as Error).message).to.equal('gone');
    expect(store.withdrawn).to.equal(1);
    expect(store.ends).to.deep.equal([]);
    expect(provider.starts).to.deep.equal([]);
    await kernel.dispose();
  });

  it('the governor takes its gates and pacers from the store, per tenant and kind', async () => {
    const store = new AsyncStore();
    const kernel = await kernelOn(store, new CountingProvider());
    kernel.tenants.define('acme', { limits: { maxConcurrentSteps: 2, maxConcurrentToolCalls: 1, requestsPerMinute: 10, tokensPerMinute: 1000 } });
    expect(store.gates).to.deep.equal([
      { tenant: 'acme', kind: 'steps' },
      { tenant: 'acme', kind: 'toolCalls' },
    ]);
    expect(store.pacers).to.deep.equal([
      { tenant: 'acme', kind: 'requests', max: 10 },
      { tenant: 'acme', kind: 'tokens', max: 1000 },
    ]);
    // A new limit changes the gate and pacer it has: none are asked for again.
    kernel.tenants.setLimits('acme', { maxConcurrentSteps: 3, maxConcurrentToolCalls: 1, requestsPerMinute: 20, tokensPerMinute: 1000 });
    expect(store.gates).to.have.length(2);
    expect(store.pacers).to.have.length(2);
    await kernel.dispose();
  });

  it('two kernels on one store hold a tenant to its cap together; the other tenant is not delayed', async () => {
    const store = new AsyncStore();
    const providerA = new CountingProvider();
    const providerB = new CountingProvider();
    let open!: () => void;
    const hold = new Promise<void>((resolve) => (open = resolve));
    providerA.hold = hold;
    providerB.hold = hold;
    const kernels = [await kernelOn(store, providerA), await kernelOn(store, providerB)];
    for (const kernel of kernels) {
      kernel.tenants.define('heavy', { limits: { maxConcurrentSteps: 3 } });
      kernel.tenants.define('light', { limits: { maxConcurrentSteps: 3 } });
    }
    const heavy = Array.from({ length: 10 }, (_, i) => kernels[i % 2]!.runner({ tenant: 'heavy' }).step({ ...base, history: historyOf(`h${i}`) }));
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(providerA.active + providerB.active, 'heavy steps at the providers').to.equal(3);
    expect(store.holders.get('heavy:steps')).to.equal(3);
    // The light tenant's step goes at once (its own count), while heavy's queue waits.
    const light = kernels[0]!.runner({ tenant: 'light' }).step({ ...base, history: historyOf('light') });
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(providerA.starts.some((s) => s.tag === 'light')).to.equal(true);
    open();
    await Promise.all([...heavy.map(async (s) => (await s).toolResults()), light]);
    expect(store.maxHeld.get('heavy:steps'), 'heavy steps at once, over both kernels').to.equal(3);
    expect(store.holders.get('heavy:steps')).to.equal(0);
    await Promise.all(kernels.map((k) => k.dispose()));
  });

  it("with onLimit 'refuse', a store's 'no room' is a TenantLimitError; its tool calls are held to their cap too", async () => {
    const store = new AsyncStore();
    const provider = new CountingProvider([toolCall('a', 'work', '{}'), toolCall('b', 'work', '{}'), toolCall('c', 'work', '{}')]);
    const kernel = await kernelOn(store, provider);
    const toolset = countingToolset(20);
    kernel.tenants.define('acme', { toolset, limits: { maxConcurrentSteps: 1, maxConcurrentToolCalls: 1, onLimit: 'refuse' } });
    let open!: () => void;
    provider.hold = new Promise<void>((resolve) => (open = resolve));
    const first = kernel.runner({ tenant: 'acme' }).step({ ...base, history: historyOf('one') });
    await new Promise((resolve) => setTimeout(resolve, 10));
    const refused = await rejectionOf(kernel.runner({ tenant: 'acme' }).step({ ...base, history: historyOf('two') }));
    expect(TenantLimitError.isInstance(refused)).to.equal(true);
    expect((refused as TenantLimitError).limit).to.equal('maxConcurrentSteps');
    expect((refused as TenantLimitError).current).to.equal(1);
    open();
    const results = await (await first).toolResults();
    // One call ran; the two started while it held the only place were refused, as error results.
    expect(toolset.maxActive).to.equal(1);
    expect(results.filter((r) => r.returnValue.isError).length).to.equal(2);
    expect(store.holders.get('acme:toolCalls')).to.equal(0);
    expect(store.holders.get('acme:steps')).to.equal(0);
    await kernel.dispose();
  });

  it('a store that cannot count fails the admission with its error, and the step never reaches the provider', async () => {
    const failing = new Error('the store is away');
    const store: LimitStore = {
      capGate: (_tenant, _kind, cap) => ({
        cap,
        active: 0,
        waiting: 0,
        setCap: () => undefined,
        tryAcquire: () => Promise.reject(failing),
        acquire: () => Promise.reject(failing),
        release: () => undefined,
        close: () => undefined,
      }),
      pacer: (tenant, kind, max) => new RatePacer(max, `${tenant}:${kind}`),
    };
    const provider = new CountingProvider([textPart('never')]);
    const kernel = await kernelOn(store, provider);
    kernel.tenants.define('acme', { limits: { maxConcurrentSteps: 1 } });
    expect(await rejectionOf(kernel.runner({ tenant: 'acme' }).step({ ...base, history: historyOf('x') }))).to.equal(failing);
    expect(provider.starts).to.deep.equal([]);
    await kernel.dispose();
  });
});
