/**
 * The `server` suite: 1,000 streaming chats at once through `@kosong/server` on loopback, against
 * the same turns run bare in one process (issue 25's load proof: time to first chunk, memory per
 * open stream ≤ 50 KB, the server's overhead over the bare turn).
 *
 * @module
 */
import type { Suite } from '../../harness.js';
import { CHATS, DELTAS_AFTER_GATE, DELTAS_BEFORE_GATE } from './workload.js';

const variants = async () => import('./variants.js');

/** Runs per process: a run of 1,000 chats takes seconds on a loaded machine. */
const RUNS = { warmup: 1, timed: 2 };

export const serverSuite: Suite = {
  name: 'server',
  title: `Server: ${CHATS.toLocaleString('en')} streaming chats at once on loopback`,
  workload:
    `${CHATS.toLocaleString('en')} agent turns started at once, each one step of ${DELTAS_BEFORE_GATE} text deltas, a wait until every turn has streamed them ` +
    `(all ${CHATS.toLocaleString('en')} streams open at once), then ${DELTAS_AFTER_GATE} more; the time of a run is until the last turn ended. ` +
    'Time to the first text delta from the start of the run (its p50 and p99 over the chats); memory per open stream: the heap and external memory ' +
    'the process running the turns holds (after full collections) while all of them wait, over the same before they started, per turn; ' +
    'CPU per chat: the user + system time of the process running the turns (the server\'s, or the measuring process for bare-turn) over the run, per chat',
  baseline: 'bare-turn',
  variants: [
    {
      name: 'bare-turn',
      maxRuns: RUNS,
      description: '`kernel.agent({ tenant }).run()` in the measuring process, the text read from `onEvent`: no HTTP',
      load: async () => ({ prepare: (await variants()).prepareBareTurns }),
    },
    {
      name: 'server',
      maxRuns: RUNS,
      description:
        '`@kosong/server` (`createServer`: Fastify 5, API-key auth, memory sessions) in a process of its own on 127.0.0.1; the chats are `POST /api/chat` from undici\'s `Pool` ' +
        `(${CHATS.toLocaleString('en')} keep-alive connections) in the measuring process, each UI message stream parsed as it arrives`,
      load: async () => ({ prepare: (await variants()).prepareServerChats }),
    },
  ],
  metrics: [
    { key: 'firstDeltaP50Ms', label: 'first text delta p50 (ms)', decimals: 1 },
    { key: 'firstDeltaP99Ms', label: 'first text delta p99 (ms)', decimals: 1 },
    { key: 'memoryPerStreamKb', label: 'memory per open stream (KB)', decimals: 1 },
    { key: 'cpuMsPerChat', label: 'CPU ms per chat of the process running the turns', decimals: 2 },
  ],
  targets: [{ variant: 'server', metric: 'memoryPerStreamKb', max: 50 }],
};
