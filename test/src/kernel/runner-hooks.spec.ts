/**
 * The hooks of a runner's steps: which methods a scope's hooks have is read once per resolution of
 * the scope (not per step), while failures still count per step, and per-call hooks still come after
 * the scope's, read per step. Plain `step()` reads its hooks list at every step.
 */
import {
  Kernel,
  definePlugin,
  step,
  textPart,
  type HookErrorReport,
  type HookErrorSink,
  type NamedStepHooks,
  type PartEvent,
  type StepHooks,
} from '@kosong/core';
import { DEFAULT_MAX_HOOK_FAILURES } from '@kosong/core/runtime';
import { MockChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';
import { FakeToolset } from '../support.js';
import { base } from './support.js';

const PARTS = [textPart('a'), textPart('b'), textPart('c'), textPart('d'), textPart('e')];

async function kernelWith(...hooks: StepHooks[]): Promise<{ kernel: Kernel; reports: HookErrorReport[] }> {
  const kernel = new Kernel();
  const reports: HookErrorReport[] = [];
  await kernel.use(
    definePlugin({
      name: 'mock',
      setup: (ctx) => {
        ctx.bindChatProvider('mock', new MockChatProvider(PARTS, { delayMs: 1 }));
        ctx.bindHookErrorSink({ report: (report) => void reports.push(report) } satisfies HookErrorSink);
      },
    }),
    ...hooks.map((h, i) => definePlugin({ name: `hooks ${i + 1}`, setup: (ctx) => ctx.bindHooks(h) })),
  );
  return { kernel, reports };
}

describe('kernel: the hooks of a runner\'s steps', () => {
  it('count failures per step: a hook detached in one step is called again in the next, and in a concurrent one', async () => {
    let calls = 0;
    const { kernel, reports } = await kernelWith({
      onPart: () => {
        calls++;
        throw new Error('boom');
      },
    });
    const runner = kernel.runner();
    await runner.step(base);
    expect(calls).to.equal(DEFAULT_MAX_HOOK_FAILURES);
    const [second, third] = await Promise.all([runner.step(base), runner.step(base)]);
    expect(calls).to.equal(3 * DEFAULT_MAX_HOOK_FAILURES);
    for (const stepId of [second.stepId, third.stepId]) {
      const own = reports.filter((r) => r.stepId === stepId);
      expect(own.map((r) => r.detached)).to.deep.equal([false, false, true]);
    }
    await kernel.dispose();
  });

  it('deliver to the scope\'s hooks, then the per-call ones in order (plain objects, own non-enumerable methods, class instances), and release the step at cleanup', async () => {
    const order: string[] = [];
    const record = (who: string) => (event: { readonly stepId: string }) => void order.push(`${who}:${event.stepId.length > 0}`);
    const hidden: StepHooks = {};
    Object.defineProperty(hidden, 'onCleanup', { value: record('hidden'), enumerable: false });
    class Counter implements StepHooks {
      onCleanup(event: { readonly stepId: string }): void {
        record('class')(event);
      }
    }
    const { kernel } = await kernelWith({ onCleanup: record('plugin') });
    const runner = kernel.runner();
    for (let i = 0; i < 2; i++) {
      await runner.step({ ...base, hooks: [{ onCleanup: record('plain') }, hidden, { name: 'named', hooks: new Counter() }] });
    }
    expect(order).to.deep.equal(['plugin:true', 'plain:true', 'hidden:true', 'class:true', 'plugin:true', 'plain:true', 'hidden:true', 'class:true']);
    // Every step released its lease at cleanup, or this would wait forever.
    await kernel.dispose();
  });

  it('read which methods the scope\'s hooks have when the scope is resolved: a method added later is called only after the next use', async () => {
    const hooks: StepHooks = {};
    const { kernel } = await kernelWith(hooks);
    const runner = kernel.runner();
    await runner.step(base);
    const parts: PartEvent[] = [];
    hooks.onPart = (event) => void parts.push(event);
    await runner.step(base);
    expect(parts).to.have.length(0);
    await kernel.use(definePlugin({ name: 'another', setup: () => {} }));
    await runner.step(base);
    expect(parts).to.have.length(PARTS.length);
    await kernel.dispose();
  });
});

describe('step(): its hooks list', () => {
  it('is read at every step: an entry added to the same list between steps is called', async () => {
    const heard: string[] = [];
    const hooks: NamedStepHooks[] = [{ name: 'first', hooks: { onStepStart: () => void heard.push('first') } }];
    const options = { ...base, provider: new MockChatProvider([textPart('x')]), toolset: new FakeToolset(), hooks };
    await step(options);
    hooks.push({ name: 'second', hooks: { onStepStart: () => void heard.push('second') } });
    await step(options);
    expect(heard).to.deep.equal(['first', 'first', 'second']);
  });
});
