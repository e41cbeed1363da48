/**
 * Variants of the `kernel` suite: the same step through plain `step()`, through a kernel runner, and
 * through a kernel runner with ten no-op hook plugins.
 *
 * @module
 */
import { Kernel, definePlugin, step, type StepHooks } from '@kosong/core';
import type { PreparedVariant } from '../../harness.js';
import { prepareStep } from '../step/kosong.js';

/** Plain `step()`: the baseline. */
export function prepareStepBaseline(): PreparedVariant {
  return prepareStep('step', (provider, toolset) => () => step({ provider, systemPrompt: 'You are a benchmark.', toolset, history: [] }));
}

/** `kernel.runner().step()` with the provider and toolset bound by a plugin, no hooks. */
export async function prepareRunner(): Promise<PreparedVariant> {
  return prepareWithKernel('runner', 0);
}

/** `kernel.runner().step()` with ten hook plugins whose six hooks do nothing. */
export async function prepareRunnerWithHooks(): Promise<PreparedVariant> {
  return prepareWithKernel('runner+10 hooks', 10);
}

async function prepareWithKernel(label: string, hookPlugins: number): Promise<PreparedVariant> {
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
        ...Array.from({ length: hookPlugins }, (_, i) => definePlugin({ name: `no-op hooks ${i + 1}`, setup: (ctx) => ctx.bindHooks(noOpHooks()) })),
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
