/**
 * Variants of the `kernel` suite: the same step through plain `step()`, through a kernel runner,
 * with ten no-op hook plugins (objects, or `@injectable` classes the container creates), and for one
 * tenant among 10 or 10,000.
 *
 * @module
 */
import { Kernel, definePlugin, injectable, step, toolOk, type Plugin, type StepHooks, type Toolset } from '@kosong/core';
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
  return prepareWithTenants('runner@10 tenants', 10);
}

/** The same among 10,000 tenants. */
export function prepareRunnerAmong10kTenants(): Promise<PreparedVariant> {
  return prepareWithTenants('runner@10k tenants', 10_000);
}

/**
 * The step suite's workload through `kernel.runner({ tenant }).step()` for one tenant, with `count`
 * tenants defined: each has a toolset and a hooks object of its own, and resolved its step once (as
 * a tenant that ran a step has). The measured tenant's toolset is the workload's.
 */
async function prepareWithTenants(label: string, count: number): Promise<PreparedVariant> {
  const kernel = new Kernel();
  const ready: Promise<void>[] = [];
  const measured = `tenant-${Math.floor(count / 2)}`;
  const prepared = prepareStep(label, (provider, toolset) => {
    ready.push(kernel.use(definePlugin({ name: 'bench', setup: (ctx) => ctx.bindChatProvider('mock', provider) })));
    for (let i = 0; i < count; i++) {
      const id = `tenant-${i}`;
      kernel.tenants.define(id, { toolset: id === measured ? toolset : otherToolset(), hooks: [{ onStepEnd() {} }] });
    }
    const runner = kernel.runner({ tenant: measured });
    return () => runner.step({ systemPrompt: 'You are a benchmark.', history: [] });
  });
  await Promise.all(ready);
  for (const id of kernel.tenants.list()) void kernel.runner({ tenant: id }).provider;
  return prepared;
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
