/**
 * Variants of the `kernel` suite: the same step through plain `step()`, through a kernel runner,
 * with ten no-op hook plugins (objects, or `@injectable` classes the container creates), and for one
 * tenant among 10 or 10,000 (with or without bindings of their own), with the heap such a tenant holds.
 *
 * @module
 */
import { Kernel, definePlugin, step, toolOk, type Plugin, type StepHooks, type StepRunner, type TenantModuleContext, type Toolset } from '@kosong/core';
import { injectable } from '@kosong/core/kernel';
import type { PreparedVariant } from '../../harness.js';
import { prepareStep } from '../step/kosong.js';
import type { ResponseShape } from '../step/workload.js';

/** Plain `step()`: the baseline. */
export function prepareStepBaseline(): PreparedVariant {
  return prepareStep('step', (provider, toolset) => () => step({ provider, systemPrompt: 'You are a benchmark.', toolset, history: [] }));
}

/** `kernel.runner().step()` with the provider and toolset bound by a plugin, no hooks. */
export async function prepareRunner(): Promise<PreparedVariant> {
  return prepareWithKernel('runner', []);
}

/** `kernel.runner().step()` with ten hook plugins whose six hooks do nothing. */
export async function prepareRunnerWithHooks(): Promise<PreparedVariant> {
  const hookPlugins = Array.from({ length: 10 }, (_, i) =>
    definePlugin({ name: `no-op hooks ${i + 1}`, setup: (ctx) => ctx.bindHooks(noOpHooks()) }),
  );
  return prepareWithKernel('runner+10 hooks', hookPlugins);
}

/** The same hooks, each plugin binding an `@injectable` class the container creates. */
@injectable()
class NoOpHooks implements StepHooks {
  onStepStart(): void {}
  onPart(): void {}
  onToolCall(): void {}
  onToolResult(): void {}
  onStepEnd(): void {}
  onCleanup(): void {}
}

/** `kernel.runner().step()` with ten hook plugins binding {@link NoOpHooks} (a class each). */
export async function prepareRunnerWithClassHooks(): Promise<PreparedVariant> {
  const hookPlugins = Array.from({ length: 10 }, (_, i) => definePlugin({ name: `no-op class hooks ${i + 1}`, setup: (ctx) => ctx.bindHooks(NoOpHooks) }));
  return prepareWithKernel('runner+10 class hooks', hookPlugins);
}

/** A step of one tenant among 10 (each with its own toolset and hooks, each resolved once). */
export function prepareRunnerAmong10Tenants(): Promise<PreparedVariant> {
  return prepareWithTenants('runner@10 tenants', 10, false);
}

/** The same among 10,000 tenants. */
export function prepareRunnerAmong10kTenants(): Promise<PreparedVariant> {
  return prepareWithTenants('runner@10k tenants', 10_000, false);
}

/** The same among 10,000 tenants that each have bindings of their own (a `module` binding a key): a container each. */
export function prepareRunnerAmong10kBoundTenants(): Promise<PreparedVariant> {
  return prepareWithTenants('runner@10k bound tenants', 10_000, true);
}

/** Tenants defined (and removed) by each heap measurement. */
const HEAP_PROBE_TENANTS = 10_000;

const ApiKey = Symbol('ApiKey');

/**
 * The step suite's workload through `kernel.runner({ tenant }).step()` for one tenant, with `count`
 * tenants defined: each has a toolset and a hooks object of its own (and, if `bound`, a `module`
 * binding its API key), and resolved its step once (as a tenant that ran a step has). The measured
 * tenant's toolset is the workload's.
 *
 * After each timed run, untimed, `measure` defines {@link HEAP_PROBE_TENANTS} more tenants of the same
 * kind, each resolving its step once, and reports the heap they hold (after full collections) per
 * tenant; then it removes them.
 */
async function prepareWithTenants(label: string, count: number, bound: boolean): Promise<PreparedVariant> {
  const kernel = new Kernel();
  const define = (id: string, toolset: Toolset): void => {
    const module = (ctx: TenantModuleContext): void => void ctx.bind(ApiKey).toConstantValue(`sk-${id}`);
    kernel.tenants.define(id, { toolset, hooks: [{ onStepEnd() {} }], ...(bound ? { module } : {}) });
    void kernel.runner({ tenant: id }).provider; // resolves (and caches) what its steps use
  };
  let setUp: Promise<StepRunner> | undefined;
  const prepared = prepareStep(label, (provider, toolset) => {
    setUp = (async () => {
      await kernel.use(definePlugin({ name: 'bench', setup: (ctx) => ctx.bindChatProvider('mock', provider) }));
      const measured = `tenant-${Math.floor(count / 2)}`;
      for (let i = 0; i < count; i++) define(`tenant-${i}`, `tenant-${i}` === measured ? toolset : otherToolset());
      return kernel.runner({ tenant: measured });
    })();
    return () => runner.step({ systemPrompt: 'You are a benchmark.', history: [] });
  });
  const runner = await setUp!;
  let probes = 0;
  return {
    ...prepared,
    async measure() {
      const ids = Array.from({ length: HEAP_PROBE_TENANTS }, (_, i) => `probe-${probes}-${i}`);
      probes++;
      const before = await settledHeap();
      for (const id of ids) define(id, otherToolset());
      const after = await settledHeap();
      await Promise.all(ids.map((id) => kernel.tenants.remove(id)));
      await settledHeap();
      return { heapPerTenantKb: (after - before) / HEAP_PROBE_TENANTS / 1024 };
    },
  };
}

/** The heap used after full collections, once pending callbacks ran (needs `--expose-gc`, as the bench runs children). */
async function settledHeap(): Promise<number> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc to measure the heap per tenant');
  for (let i = 0; i < 3; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    gc();
  }
  return process.memoryUsage().heapUsed;
}

function otherToolset(): Toolset {
  return { tools: [], handle: (call) => ({ toolCallId: call.id, returnValue: toolOk({ output: 'other' }) }) };
}

/**
 * The step suite's workload (or a response of `shape`) through `kernel.runner().step()`: the provider
 * and toolset bound by a plugin, then `plugins` (hooks, telemetry, …).
 */
export async function prepareWithKernel(label: string, plugins: readonly Plugin[], shape?: ResponseShape): Promise<PreparedVariant> {
  const kernel = new Kernel();
  const ready: Promise<void>[] = [];
  const prepared = prepareStep(label, (provider, toolset) => {
    ready.push(
      kernel.use(
        definePlugin({
          name: 'bench',
          setup(ctx) {
            ctx.bindChatProvider('mock', provider);
            ctx.bindToolset(toolset);
          },
        }),
        ...plugins,
      ),
    );
    const runner = kernel.runner();
    return () => runner.step({ systemPrompt: 'You are a benchmark.', history: [] });
  }, shape);
  await Promise.all(ready);
  return prepared;
}

/** A hooks object whose six hooks do nothing. */
export function noOpHooks(): StepHooks {
  return {
    onStepStart() {},
    onPart() {},
    onToolCall() {},
    onToolResult() {},
    onStepEnd() {},
    onCleanup() {},
  };
}
