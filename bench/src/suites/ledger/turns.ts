/**
 * Turns per timed run of the `ledger` suite, by context kind: about 150–600 ms a run each on the
 * 2-core VM. A module of its own, so that registering the suite loads nothing else.
 *
 * @module
 */
export const TURNS = { memory: 800, file: 60, 'file-paced': 16, redis: 150, 'redis-aof': 60 } as const;

/** A kind of context the suite measures. */
export type ContextKind = keyof typeof TURNS;
