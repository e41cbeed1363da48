/**
 * The `kernel` suite: what the kernel adds to a step — resolving provider, toolset and hooks from the
 * container, and delivering every event to ten hook plugins — on the `step` suite's workload.
 *
 * @module
 */
import type { Suite } from '../../harness.js';
import { stepSuite } from '../step/index.js';

export const kernelSuite: Suite = {
  name: 'kernel',
  title: 'Kernel: runner.step vs bare step()',
  workload: `${stepSuite.workload} (the step suite's workload)`,
  baseline: 'step',
  variants: [
    { name: 'step', description: 'plain `step()` + `toolResults()`', load: async () => ({ prepare: (await import('./variants.js')).prepareStepBaseline }) },
    {
      name: 'runner',
      description: '`kernel.runner().step()`, provider and toolset from a plugin, no hooks',
      load: async () => ({ prepare: (await import('./variants.js')).prepareRunner }),
    },
    {
      name: 'runner+10hooks',
      description: 'the same with 10 hook plugins, each with all six hooks as no-ops',
      load: async () => ({ prepare: (await import('./variants.js')).prepareRunnerWithHooks }),
    },
  ],
  targets: [
    { variant: 'runner', baseline: 'step', maxRatio: 1.1 },
    { variant: 'runner+10hooks', baseline: 'step', maxRatio: 1.5 },
  ],
};
