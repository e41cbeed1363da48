/**
 * The `ledger` suite: what the durable call ledger costs an agent turn of two steps with two tool
 * calls, per kind of context — tools whose calls the ledger does not record (`'safe'`: the cost
 * without ledger records) against tools that declare no policy (`'never'`: a synced start record
 * before each call, an outcome record after). Each pair is compared within itself; Redis variants
 * also count their round trips.
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
  { kind: 'redis', description: '`RedisContext` on a local redis-server without persistence, one session' },
  { kind: 'redis-aof', description: '`RedisContext` on a local redis-server with AOF, `appendfsync always`, one session' },
];

function load(kind: ContextKind, mode: LedgerMode): VariantEntry['load'] {
  return async () => {
    const v = await variants();
    if (kind === 'memory') return { prepare: v.prepareMemory(mode) };
    if (kind === 'file') return { prepare: v.prepareFile(mode) };
    return { prepare: v.prepareRedis(mode, kind === 'redis-aof') };
  };
}

function entries(): VariantEntry[] {
  return KINDS.flatMap(({ kind, description }) => [
    {
      name: `${kind}-today`,
      description: `${description}; tools declare \`replayPolicy() { return 'safe' }\`: no ledger records; ${TURNS[kind]} turns per run`,
      baseline: `${kind}-today`,
      load: load(kind, 'today'),
    },
    {
      name: `${kind}-ledger`,
      description: `the same, tools declare no policy (\`'never'\`): each call's start (synced) and outcome recorded; ${TURNS[kind]} turns per run`,
      baseline: `${kind}-today`,
      load: load(kind, 'ledger'),
    },
  ]);
}

export const ledgerSuite: Suite = {
  name: 'ledger',
  title: 'Call ledger: a 2-tool agent turn with and without ledger records',
  workload:
    'agent turns one after the other (`Agent.run`), each 2 steps from a scripted MockChatProvider: step 1 streams 5 text deltas and 2 tool calls ' +
    '(`lookup`, `save`, arguments in 3 fragments each), step 2 a 5-delta answer; the tools parse their arguments and resolve at once. ' +
    'Each context kind is a pair: `today` (tools declare `replayPolicy` `safe`, so the ledger records nothing: the history appends only) against ' +
    '`ledger` (no policy: a start record before each call, synced; an outcome record after, unsynced). ' +
    'Redis variants count every command their client sends (round trips per turn) and, untimed, 10 turns with safe tools in the same process: ' +
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
    { key: 'extraRoundTripsPerCall', label: 'extra Redis round trips per call (vs safe tools)', decimals: 2 },
    { key: 'redisLedger', label: 'RedisContext has a ledger (1/0)', decimals: 0 },
  ],
  targets: [
    ...KINDS.map(({ kind }) => ({ variant: `${kind}-ledger`, baseline: `${kind}-today`, maxRatio: 1.1 })),
    { variant: 'redis-ledger', metric: 'extraRoundTripsPerCall', max: 2 },
    { variant: 'redis-aof-ledger', metric: 'extraRoundTripsPerCall', max: 2 },
  ],
};
