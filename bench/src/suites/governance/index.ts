/**
 * The `governance` suite: what holding a tenant to its limits costs a small step (issue 24's
 * target: ≤ 1.05× the same step without limits).
 *
 * @module
 */
import type { Suite } from '../../harness.js';
import { SMALL_RESPONSE } from '../small/variants.js';
import { REDIS_STEPS, STEPS } from './workload.js';

const variants = async () => import('./variants.js');

export const governanceSuite: Suite = {
  name: 'governance',
  title: 'Tenant governance: a small step with and without limits',
  workload:
    `${STEPS.toLocaleString('en')} steps per run, one after the other, each one response of ${SMALL_RESPONSE.textDeltas} text deltas and ` +
    `${SMALL_RESPONSE.toolCalls} tool calls from the MockChatProvider (usage reported, the model priced), through \`kernel.runner({ tenant }).step()\`; ` +
    'every step is recorded in the usage ledger (memory) in both; the Redis variants are a pair of their own, with Redis round trips counted per step (every ioredis command of the process)',
  baseline: 'runner',
  variants: [
    { name: 'runner', description: 'a tenant without limits', load: async () => ({ prepare: (await variants()).prepareWithoutLimits }) },
    {
      name: 'runner+limits',
      description:
        'the tenant with limits in memory: requestsPerMinute 10⁹ and tokensPerMinute 10¹² (paced, never waiting), maxConcurrentSteps 4, maxConcurrentToolCalls 8, a budget of $10⁶ a day',
      load: async () => ({ prepare: (await variants()).prepareWithMemoryLimits }),
    },
    {
      name: 'redis-ledger',
      baseline: 'redis-ledger',
      description: `the tenant without limits, each step recorded in \`RedisUsageLedger\` (a local redis-server, no persistence): ${REDIS_STEPS} steps per run`,
      load: async () => ({ prepare: () => import('./variants.js').then((v) => v.prepareRedisSteps('ledger')) }),
    },
    {
      name: 'redis-limits',
      baseline: 'redis-ledger',
      description: `the tenant with the same limits in Redis (\`RedisGovernance.kernelOptions\`: caps as leased places, pacing on RateLimiterRedis, the budget from the Redis ledger): ${REDIS_STEPS} steps per run`,
      load: async () => ({ prepare: () => import('./variants.js').then((v) => v.prepareRedisSteps('limits')) }),
    },
  ],
  metrics: [
    { key: 'roundTripsPerStep', label: 'Redis round trips per step', decimals: 2 },
    { key: 'commandsPerStep', label: 'Redis commands per step', decimals: 2 },
    { key: 'extraRoundTripsPerStep', label: 'extra Redis round trips per step (vs a step recorded in the Redis ledger, no limits)', decimals: 2 },
  ],
  targets: [
    { variant: 'runner+limits', baseline: 'runner', maxRatio: 1.05 },
    { variant: 'redis-limits', metric: 'extraRoundTripsPerStep', max: 1 },
  ],
};
