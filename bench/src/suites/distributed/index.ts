/**
 * The `distributed` suite: what running on BullMQ and Redis costs and gives — one tool call through
 * a `RemoteToolset` against the same call in process, and agent turns per second on 1, 2 and 4
 * worker processes. Each measurement starts its own `redis-server` and worker processes (untimed).
 * Latency percentiles, abort latency and Redis round trips per step: `node bench/lib/suites/distributed/details.js`.
 *
 * @module
 */
import type { Suite } from '../../harness.js';

export const distributedSuite: Suite = {
  name: 'distributed',
  title: 'Distributed: remote tool calls and queued turns on BullMQ + Redis',
  workload:
    'calls: 200 sequential calls of a tool that answers at once; turns: 48 turns over 16 sessions, each 2 steps (one remote tool call, then an answer) from a scripted model streaming 5 parts 10 ms apart per step (latency, like a real model); a local redis-server',
  baseline: 'local-calls',
  variants: [
    {
      name: 'local-calls',
      description: '200 calls of `Toolset.handle` on the toolset in this process',
      load: async () => ({ prepare: (await import('./variants.js')).prepareLocalCalls }),
    },
    {
      name: 'remote-calls',
      description: '200 calls through `RemoteToolset` to a `ToolWorker` in another process',
      load: async () => ({ prepare: (await import('./variants.js')).prepareRemoteCalls }),
    },
    {
      name: 'turns-1w',
      description: '48 turns submitted with `TurnQueue`, run by 1 worker process (agent + tool worker, concurrency 4)',
      load: async () => ({ prepare: (await import('./variants.js')).prepareTurns(1) }),
      maxRuns: { warmup: 1, timed: 2 },
    },
    {
      name: 'turns-2w',
      description: 'the same on 2 worker processes',
      load: async () => ({ prepare: (await import('./variants.js')).prepareTurns(2) }),
      maxRuns: { warmup: 1, timed: 2 },
    },
    {
      name: 'turns-4w',
      description: 'the same on 4 worker processes',
      load: async () => ({ prepare: (await import('./variants.js')).prepareTurns(4) }),
      maxRuns: { warmup: 1, timed: 2 },
    },
  ],
  comparisons: [
    ['turns-2w', 'turns-1w'],
    ['turns-4w', 'turns-1w'],
  ],
};
