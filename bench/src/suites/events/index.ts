/**
 * The `events` suite: what a hook event costs — built (a frozen object), delivered to a guarded hook —
 * and that none is built when no hook listens.
 *
 * @module
 */
import type { Suite } from '../../harness.js';
import { CALLS } from './variants.js';

const variants = async () => import('./variants.js');

export const eventsSuite: Suite = {
  name: 'events',
  title: 'Hook events: cost per event',
  workload:
    `one step of ${CALLS.toLocaleString('en')} tool calls and no text (the tool resolves at once); with a hook, ${(2 * CALLS).toLocaleString('en')} events ` +
    '(`onToolCall` and `onToolResult` of every call). The cost per event is measured in the `step+hook` process: 21 steps without and 21 with the hook, ' +
    'alternated, the difference of their medians divided by the events',
  baseline: 'step',
  variants: [
    { name: 'step', description: '`step()` + `toolResults()`, no hooks', load: async () => ({ prepare: (await variants()).prepareWithoutHooks }) },
    {
      name: 'step+hook',
      description: 'the same with one hooks object whose `onToolCall` and `onToolResult` count calls',
      load: async () => ({ prepare: (await variants()).prepareWithHook }),
    },
  ],
  metrics: [{ key: 'eventNs', label: 'ns per event', decimals: 0 }],
  targets: [{ variant: 'step+hook', metric: 'eventNs', max: 200 }],
};
