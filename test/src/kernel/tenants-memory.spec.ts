/**
 * What a tenant costs in heap: a tenant without bindings of its own has no container, and shares the
 * kernel's services unless they differ per tenant. (Heap, not time: measured after full GCs.)
 */
import { Kernel, TenantId, definePlugin, textPart, toolOk, type StepHooks, type Toolset } from '@kosong/core';
import type { ServiceClass } from '@kosong/core/kernel';
import { MockChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';
import { inject, injectable, preDestroy } from 'inversify';
import { base } from './support.js';

const TENANTS = 10_000;
const gc = (globalThis as { gc?: () => void }).gc;

/** The heap after full collections, once pending callbacks ran. */
async function settledHeap(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    await new Promise((resolve) => setTimeout(resolve, 2));
    gc!();
  }
  return process.memoryUsage().heapUsed;
}

@injectable()
class SharedHooks implements StepHooks {
  onStepStart(): void {}
}

@injectable()
class PerTenantHooks implements StepHooks {
  static destroyed = 0;
  static latest: PerTenantHooks | undefined;
  constructor(@inject(TenantId) readonly tenant: TenantId) {
    PerTenantHooks.latest = this;
  }
  onStepStart(): void {}
  @preDestroy()
  destroy(): void {
    PerTenantHooks.destroyed++;
  }
}

const toolset: Toolset = { tools: [], handle: (c) => ({ toolCallId: c.id, returnValue: toolOk({ output: 'ok' }) }) };

/** A kernel with a mock provider, the toolset (if asked) and `count` hooks made by `hooks`. */
async function kernelWith(hooks: () => StepHooks | ServiceClass<StepHooks>, count: number, withToolset: boolean): Promise<Kernel> {
  const kernel = new Kernel();
  await kernel.use(
    definePlugin({
      name: 'setup',
      setup(ctx) {
        ctx.bindChatProvider('mock', new MockChatProvider([textPart('ok')]));
        if (withToolset) ctx.bindToolset(toolset);
        for (let i = 0; i < count; i++) ctx.bindHooks(hooks());
      },
    }),
  );
  return kernel;
}

describe('kernel: heap per tenant', function () {
  this.timeout(60_000);
  before(function () {
    if (typeof gc !== 'function') this.skip(); // needs `node --expose-gc` (mocha: "node-option": ["expose-gc"])
  });

  const cases: { readonly name: string; readonly hooks: () => StepHooks | ServiceClass<StepHooks>; readonly maxBytes: number }[] = [
    { name: '10 hook objects', hooks: () => ({ onStepStart() {} }), maxBytes: 4096 },
    { name: '10 hook classes shared by the tenants', hooks: () => SharedHooks, maxBytes: 4096 },
    // Each tenant gets its own 10 instances (they inject the tenant id): still no container per tenant.
    { name: '10 hook classes created per tenant', hooks: () => PerTenantHooks, maxBytes: 8192 },
  ];

  for (const { name, hooks, maxBytes } of cases) {
    it(`${name}: ${TENANTS} tenants that ran a step cost at most ${maxBytes} bytes each`, async () => {
      const kernel = await kernelWith(hooks, 10, true);
      try {
        // Warm up (code, caches), then measure: defining tenants, each with its own toolset and hooks, and resolving its step.
        const define = (id: string): void => {
          kernel.tenants.define(id, { toolset: { ...toolset }, hooks: [{ onStepEnd() {} }] });
          void kernel.runner({ tenant: id }).provider;
        };
        for (let i = 0; i < 1_000; i++) define(`warm-${i}`);
        await kernel.runner({ tenant: 'warm-0' }).step(base);
        const before = await settledHeap();
        for (let i = 0; i < TENANTS; i++) define(`tenant-${i}`);
        const perTenant = ((await settledHeap()) - before) / TENANTS;
        if (process.env.KOSONG_TEST_VERBOSE) console.log(`${name}: ${perTenant.toFixed(0)} bytes per tenant`);
        expect(perTenant).to.be.lessThan(maxBytes);
        await kernel.runner({ tenant: `tenant-${TENANTS - 1}` }).step(base); // and they work
      } finally {
        await kernel.dispose();
      }
    });
  }

  it('per-tenant instances are destroyed with their tenant and collected: 10,000 define/step/remove cycles do not grow the heap', async () => {
    const kernel = await kernelWith(() => PerTenantHooks, 1, false);
    PerTenantHooks.destroyed = 0;
    try {
      const refs: WeakRef<object>[] = [];
      const cycle = async (i: number): Promise<void> => {
        const id = `cycle-${i}`;
        kernel.tenants.define(id);
        if (i % 100 === 0) await kernel.runner({ tenant: id }).step(base);
        else void kernel.runner({ tenant: id }).provider;
        if (i % 1_000 === 0) {
          expect(PerTenantHooks.latest!.tenant).to.equal(id);
          refs.push(new WeakRef(PerTenantHooks.latest!));
        }
        await kernel.tenants.remove(id);
      };
      for (let i = 0; i < 1_000; i++) await cycle(-1 - i);
      const before = await settledHeap();
      const destroyedBefore = PerTenantHooks.destroyed;
      for (let i = 0; i < TENANTS; i++) await cycle(i);
      PerTenantHooks.latest = undefined;
      const grownKb = ((await settledHeap()) - before) / 1024;
      expect(PerTenantHooks.destroyed - destroyedBefore, 'one instance per tenant, destroyed on removal').to.equal(TENANTS);
      expect(refs.filter((r) => r.deref() !== undefined), 'instances of removed tenants still reachable').to.have.length(0);
      expect(grownKb, `heap grew by ${grownKb.toFixed(0)} KB`).to.be.lessThan(2048);
    } finally {
      await kernel.dispose();
    }
  });
});
