/**
 * The `governance` suite: what holding a tenant to its limits costs a small step (issue 24's
 * target: ≤ 1.05× the same step without limits).
 *
 * @module
 */
import type { Suite } from '../../harness.js';
import { SMALL_RESPONSE } from '../small/variants.js';
import { STEPS } from './variants.js';

const variants = async () => import('./variants.js');

export const governanceSuite: Suite = {
  name: 'governance',
  title: 'Tenant governance: a small step with and without limits',
  workload:
    `${STEPS.toLocaleString('en')} steps per run, one after the other, each one response of ${SMALL_RESPONSE.textDeltas} text deltas and ` +
    `${SMALL_RESPONSE.toolCalls} tool calls from the MockChatProvider (usage reported, the model priced), through \`kernel.runner({ tenant }).step()\`; ` +
    'every step is recorded in the usage ledger (memory) in both variants',
  baseline: 'runner',
  variants: [
    { name: 'runner', description: 'a tenant without limits', load: async () => ({ prepare: (await variants()).prepareWithoutLimits }) },
    {
      name: 'runner+limits',
      description:
        'the tenant with limits in memory: requestsPerMinute 10⁹ and tokensPerMinute 10¹² (paced, never waiting), maxConcurrentSteps 4, maxConcurrentToolCalls 8, a budget of $10⁶ a day',
      load: async () => ({ prepare: (await variants()).prepareWithMemoryLimits }),
    },
  ],
  targets: [{ variant: 'runner+limits', baseline: 'runner', maxRatio: 1.05 }],
};
