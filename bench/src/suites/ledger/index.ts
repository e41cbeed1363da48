/**
 * The `ledger` suite: what the durable call ledger costs an agent turn of two steps with two tool
 * calls, per kind of context — steps that record nothing (`today`: the step function drops the
 * ledger, as before it existed) against steps that record each call (`ledger`: a start record before
 * each call, synced to disk in a file, an outcome record after). Files also have `written`: start
 * records written but not synced (`syncCallStarts: false`). Each pair is compared within itself;
 * Redis variants also count their round trips.
 *
 * @module
 */
import type { Suite, VariantEntry } from '../../harness.js';
import type { LedgerMode } from './workload.js';
import { TURNS, type ContextKind } from './turns.js';

const variants = async () => import('./variants.js');

const KINDS: readonly { readonly kind: ContextKind; readonly description: string }[] = [
  { kind: 'memory', description: 'an in-memory `LinearContext()` (no file), a new one each turn' },
  { kind: 'file', description: '`LinearContext(path)` on a JSONL file in the OS temporary directory (ext4 here), one session' },
  {
    kind: 'file-paced',
    description: 'the same with a model that waits 2 ms before each part it streams (500 parts a second, faster than any real model), one session',
  },
  { kind: 'redis', description: '`RedisContext` on a local redis-server without persistence, one session' },
  { kind: 'redis-aof', description: '`RedisContext` on a local redis-server with AOF, `appendfsync always`, one session' },
];

function load(kind: ContextKind, mode: LedgerMode): VariantEntry['load'] {
  return async () => {
    const v = await variants();
    if (kind === 'memory') return { prepare: v.prepareMemory(mode) };
    if (kind === 'file') return { prepare: v.prepareFile(mode) };
    if (kind === 'file-paced') return { prepare: v.prepareFile(mode, true) };
    return { prepare: v.prepareRedis(mode, kind === 'redis-aof') };
  };
}

function entries(): VariantEntry[] {
  return KINDS.flatMap(({ kind, description }) => [
    {
      name: `${kind}-today`,
      description: `${description}; the step function drops the ledger: nothing recorded, as before it existed; ${TURNS[kind]} turns per run`,
      baseline: `${kind}-today`,
      load: load(kind, 'today'),
    },
    {
      name: `${kind}-ledger`,
      description: `the same with the ledger: each call's start (synced, in a file) and outcome recorded; ${TURNS[kind]} turns per run`,
      baseline: `${kind}-today`,
      load: load(kind, 'ledger'),
    },
    ...(kind === 'file'
      ? [
          {
            name: 'file-written',
            description: 'the same with `LinearContext(path, { syncCallStarts: false })`: start records written, not synced (a process crash keeps them, a power cut may not)',
            baseline: 'file-today',
            load: load(kind, 'written'),
          },
        ]
      : []),
  ]);
}

export const ledgerSuite: Suite = {
  name: 'ledger',
  title: 'Call ledger: a 2-tool agent turn with and without ledger records',
  workload:
    'agent turns one after the other (`Agent.run`), each 2 steps from a scripted MockChatProvider: step 1 streams 5 text deltas and 2 tool calls ' +
    '(`lookup`, `save`, arguments in 3 fragments each), step 2 a 5-delta answer; the tools parse their arguments and resolve at once. ' +
    'Each context kind is a pair: `today` (the step function drops the ledger, so nothing is recorded: the history appends only) against ' +
    '`ledger` (a start record before each call, synced in a file; an outcome record after, unsynced); `file-written` writes the starts without a sync. ' +
    'Redis variants count every command their client sends (round trips per turn) and, untimed, 10 turns without the ledger in the same process: ' +
    'extra round trips per call = (round trips per turn − the reference) / 2',
  baseline: 'file-today',
  variants: entries(),
  comparisons: [
    ['file-today', 'memory-today'],
    ['redis-today', 'memory-today'],
    ['redis-aof-today', 'redis-today'],
  ],
  metrics: [
    { key: 'syncsPerTurn', label: 'fsyncs per turn', decimals: 1 },
    { key: 'writesPerTurn', label: 'file writes per turn', decimals: 1 },
    { key: 'roundTripsPerTurn', label: 'Redis round trips per turn', decimals: 1 },
    { key: 'commandsPerTurn', label: 'Redis commands per turn', decimals: 1 },
    { key: 'extraRoundTripsPerCall', label: 'extra Redis round trips per call (vs no ledger)', decimals: 2 },
    { key: 'redisLedger', label: 'RedisContext has a ledger (1/0)', decimals: 0 },
  ],
  targets: [
    ...KINDS.map(({ kind }) => ({ variant: `${kind}-ledger`, baseline: `${kind}-today`, maxRatio: 1.1 })),
    { variant: 'redis-ledger', metric: 'extraRoundTripsPerCall', max: 2 },
    { variant: 'redis-aof-ledger', metric: 'extraRoundTripsPerCall', max: 2 },
  ],
};
