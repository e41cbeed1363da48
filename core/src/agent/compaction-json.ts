/**
 * The wire form of a compaction (see `CompactionRecord`): one JSON object, one line of a JSONL
 * history (or one Redis value), `{"role":"_compaction","token_count":N,"replaces":K,"summary":{…}}`.
 * Its `token_count` makes readers that know nothing of it (the Python kosong, older versions of
 * this library) take it for a token-count record and skip it: they load the whole original history.
 *
 * @module
 */
import { messageFromJSON, messageToJSON } from '../message/json.js';
import type { JsonObject } from '../message/parts.js';
import type { CompactionRecord } from './compaction.js';

/** The `role` of a compaction record. */
export const COMPACTION_ROLE = '_compaction';

/** Whether a parsed JSON value is a compaction record (by its role; {@link compactionFromJSON} checks the rest). */
export function isCompactionJSON(value: unknown): boolean {
  return typeof value === 'object' && value !== null && (value as { role?: unknown }).role === COMPACTION_ROLE;
}

/** The wire form of a compaction, with the history's token count (for readers that know only that). */
export function compactionToJSON(record: CompactionRecord, tokenCount: number): JsonObject {
  return { role: COMPACTION_ROLE, token_count: tokenCount, replaces: record.replaces, summary: messageToJSON(record.summary) };
}

/**
 * Reads a compaction from its wire form.
 * @throws Error naming the first problem.
 */
export function compactionFromJSON(value: unknown): CompactionRecord {
  const wire = value as { token_count?: unknown; replaces?: unknown; summary?: unknown };
  if (typeof wire.token_count !== 'number' || !(wire.token_count >= 0)) throw new Error('invalid compaction: token_count is not a count');
  if (!Number.isSafeInteger(wire.replaces) || (wire.replaces as number) < 1) throw new Error('invalid compaction: replaces is not a positive integer');
  let summary;
  try {
    summary = messageFromJSON(wire.summary);
  } catch (error) {
    throw new Error(`invalid compaction summary: ${(error as Error).message}`, { cause: error });
  }
  return { replaces: wire.replaces as number, summary };
}
