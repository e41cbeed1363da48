/**
 * The `events` suite: what a hook event costs — built (read-only, its part frozen), delivered
 * to a guarded hook that reads it — measured on the step suite's workload, where every streamed part is an event.
 * That no event is built for a hook nobody has is the `step` variant: it pays for none.
 *
 * @module
 */
import type { Suite } from '../../harness.js';
import { stepSuite } from '../step/index.js';
import { EVENTS, PAIRS } from './variants.js';

const variants = async () => import('./variants.js');

export const eventsSuite: Suite = {
  name: 'events',
  title: 'Hook events: cost per event',
  workload:
    `${stepSuite.workload} (the step suite's workload); with a hook on \`onPart\`, \`onToolCall\` and \`onToolResult\`, ${EVENTS.toLocaleString('en')} events per step. ` +
    `The cost of one event is measured inside each \`step+hook\` process after its timed runs: ${PAIRS} steps without and ${PAIRS} with the hook, alternated, ` +
    'the difference of their median CPU times (user + system) divided by the events of a step',
  baseline: 'step',
  variants: [
    { name: 'step', description: '`step()` + `toolResults()`, no hooks (no event is built)', load: async () => ({ prepare: (await variants()).prepareWithoutHooks }) },
    {
      name: 'step+hook',
      description: 'the same with one hooks object whose `onPart` (reading the part), `onToolCall` and `onToolResult` count their events',
      load: async () => ({ prepare: (await variants()).prepareWithHook }),
    },
  ],
  metrics: [{ key: 'eventNs', label: 'ns per event', decimals: 0 }],
  targets: [{ variant: 'step+hook', metric: 'eventNs', max: 200 }],
};
