/**
 * The `concurrent` suite: 10,000 steps in flight at once — the time to run them and the heap each one
 * holds while it waits mid-stream — against as many bare streams.
 *
 * @module
 */
import type { Suite } from '../../harness.js';
import { STEPS } from './variants.js';

const variants = async () => import('./variants.js');

export const concurrentSuite: Suite = {
  name: 'concurrent',
  title: `${STEPS.toLocaleString('en')} concurrent steps`,
  workload:
    `${STEPS.toLocaleString('en')} steps started at once, each streaming 5 parts (a tool call, its arguments in 3 fragments, a text delta), ` +
    'then waiting mid-stream until all have got there; then all end. The tool resolves at once. The heap per in-flight step is measured in an ' +
    'untimed wave after each timed run: heap used while all wait (after a full GC) less the heap before, per step',
  baseline: 'bare',
  variants: [
    { name: 'bare', description: 'a `for await` over each stream, counting parts: the floor', load: async () => ({ prepare: (await variants()).prepareBare }) },
    { name: 'step', description: '`step()` + `toolResults()` for each', load: async () => ({ prepare: (await variants()).prepareSteps }) },
  ],
  metrics: [{ key: 'heapPerStepKb', label: 'heap per in-flight step (KB)', decimals: 2 }],
  targets: [
    { variant: 'step', baseline: 'bare', maxRatio: 4 },
    { variant: 'step', metric: 'heapPerStepKb', max: 2.5 },
  ],
};
