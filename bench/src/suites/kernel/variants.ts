/**
 * Variants of the `kernel` suite: the same step through plain `step()`, through a kernel runner, and
 * through a kernel runner with ten no-op hook plugins.
 *
 * @module
 */
import { Kernel, definePlugin, step, type Plugin, type StepHooks } from '@kosong/core';
import type { PreparedVariant } from '../../harness.js';
import { prepareStep } from '../step/kosong.js';

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

/**
 * The step suite's workload through `kernel.runner().step()`: the provider and toolset bound by a
 * plugin, then `plugins` (hooks, telemetry, …).
 */
export async function prepareWithKernel(label: string, plugins: readonly Plugin[]): Promise<PreparedVariant> {
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
  });
  await Promise.all(ready);
  return prepared;
}

function noOpHooks(): StepHooks {
  return {
    onStepStart() {},
    onPart() {},
    onToolCall() {},
    onToolResult() {},
    onStepEnd() {},
    onCleanup() {},
  };
}
