/**
 * The wire form of call-ledger records, one JSON object each: a line of a JSONL history, or a Redis
 * value. Like the pending step, each carries a `role` starting with `_` and a `token_count`, so
 * readers that know nothing of the ledger (the Python kosong, older versions) skip it.
 *
 * @module
 */
import { messageFromJSON, messageToJSON } from '../message/json.js';
import type { JsonObject } from '../message/parts.js';
import type { CallRecord } from './call-ledger.js';
import { toolResultFromJSON, toolResultToJSON } from './pending-step-json.js';

/** The `role` of a call's start record. */
export const CALL_STARTED_ROLE = '_call_started';

/** The `role` of a call's outcome record. */
export const CALL_SETTLED_ROLE = '_call_settled';

/** The wire form of a ledger record, with the history's token count (for readers that know only that). */
export function callRecordToJSON(record: CallRecord, tokenCount: number): JsonObject {
  if (record.type === 'outcome') {
    const wire: JsonObject = { role: CALL_SETTLED_ROLE, token_count: tokenCount, step_key: record.key, index: record.index, result: toolResultToJSON(record.result) };
    return record.ran === false ? { ...wire, ran: false } : wire;
  }
  const delta = messageToJSON({ role: 'assistant', content: record.content, toolCalls: record.toolCalls });
  return {
    role: CALL_STARTED_ROLE,
    token_count: tokenCount,
    step_key: record.key,
    index: record.index,
    content_from: record.contentFrom,
    calls_from: record.callsFrom,
    delta,
  };
}

/** Whether a parsed JSON value is a ledger record (by its role). */
export function isCallRecordJSON(value: unknown): boolean {
  const role = typeof value === 'object' && value !== null ? (value as { role?: unknown }).role : undefined;
  return role === CALL_STARTED_ROLE || role === CALL_SETTLED_ROLE;
}

/** Reads a ledger record from its wire form, checking all of it. @throws Error naming the first problem. */
export function callRecordFromJSON(value: unknown): CallRecord {
  const wire = value as Record<string, unknown>;
  const key = wire['step_key'];
  const index = wire['index'];
  if (typeof wire['token_count'] !== 'number') throw new Error('invalid call record: token_count is not a number');
  if (typeof key !== 'string' || key === '') throw new Error('invalid call record: no step_key');
  if (!isCount(index)) throw new Error('invalid call record: index is not a whole number');
  if (wire['role'] === CALL_SETTLED_ROLE) {
    const ran = wire['ran'];
    if (ran !== undefined && ran !== false) throw new Error('invalid call record: ran must be false or absent');
    const result = toolResultFromJSON(wire['result']);
    return ran === false ? { type: 'outcome', key, index, result, ran } : { type: 'outcome', key, index, result };
  }
  const contentFrom = wire['content_from'];
  const callsFrom = wire['calls_from'];
  if (!isCount(contentFrom) || !isCount(callsFrom)) throw new Error('invalid call record: content_from and calls_from must be whole numbers');
  let delta;
  try {
    delta = messageFromJSON(wire['delta']);
  } catch (error) {
    throw new Error(`invalid call record: its delta is not a message (${(error as Error).message})`, { cause: error });
  }
  if (delta.role !== 'assistant') throw new Error('invalid call record: its delta is not an assistant message');
  return { type: 'start', key, index, contentFrom, content: delta.content, callsFrom, toolCalls: delta.toolCalls ?? [] };
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}
