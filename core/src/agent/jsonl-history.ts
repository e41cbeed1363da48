import { messageFromJSON } from '../message/json.js';
import type { Message } from '../message/message.js';
import { OpenStepState } from './call-ledger.js';
import { compactionFromJSON, isCompactionJSON } from './compaction-json.js';
import { ContextCorruptedError } from './context-errors.js';
import { callRecordFromJSON, isCallRecordJSON } from './ledger-json.js';
import type { PendingStep } from './pending-step.js';
import { PENDING_STEP_ROLE, pendingStepFromJSON, STEP_RESUMED_ROLE, stepResumedFromJSON } from './pending-step-json.js';

/** A JSONL history file, checked from its first byte to its last. */
export interface ParsedHistory {
  readonly messages: readonly Message[];
  /** The last `_usage` record's token count, if there was one. */
  readonly tokenCount: number | undefined;
  /** The step waiting for approval, if the file ends with one (see {@link parseJsonlHistory}). */
  readonly pendingStep: PendingStep | undefined;
  /** The call ledger's records since the last message: the open step, if any. */
  readonly ledger: OpenStepState;
  /** How many bytes of the file are whole records (everything but a torn tail). */
  readonly validLength: number;
  /** The torn tail (an append cut short), if there is one: the bytes after {@link validLength}. */
  readonly tornTail: Buffer | undefined;
  /** Whether the file ends with a complete record that lost only its newline (the next append starts with one). */
  readonly needsNewline: boolean;
}

/** How every line of kosong's (and the Python kosong's) writer starts: a torn first line must too. */
const RECORD_START = /^\{\s*"role"\s*:\s*"/;
const NEWLINE = 0x0a;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Checks a whole JSONL history file without changing anything: one message (Python kosong wire
 * format) or `{"role":"_usage","token_count":N}` per line, blank lines ignored.
 *
 * A `_compaction` record replaces the first messages so far with its summary (see `compactionFromJSON`).
 *
 * Steps waiting for approval: a `_pending_step` record holds one (a later one for the same step
 * replaces it); a `_step_resumed` record naming it completes it, the step's messages following.
 * A message after a pending step without that record means a writer that knows nothing of pending
 * steps (the Python kosong, an older version) went on with the session: the pending step was
 * abandoned. A `_step_resumed` for no pending step, or a second pending step while one waits, is
 * a corrupted file. Other records with a `token_count` are token counts (as every kosong reads them).
 *
 * A last line without a newline that is not JSON is a *torn tail* (an append cut short) only when
 * whole records come before it, or when it starts the way every record starts (`{"role":"`, spaces allowed): so a
 * text file or random bytes are never taken for a session with a torn tail.
 *
 * @throws ContextCorruptedError naming the first bad line (`notAHistoryFile` when no valid record
 *   precedes it).
 */
export function parseJsonlHistory(bytes: Buffer, path: string): ParsedHistory {
  const messages: Message[] = [];
  let tokenCount: number | undefined;
  let pendingStep: PendingStep | undefined;
  const ledger = new OpenStepState();
  let records = 0;
  let line = 0;
  let start = 0;
  const fail = (detail: string, cause?: unknown): never => {
    throw new ContextCorruptedError(path, line, detail, { notAHistoryFile: records === 0, cause });
  };
  const read = <T>(parse: (value: unknown) => T, value: unknown): T => {
    try {
      return parse(value);
    } catch (error) {
      return fail((error as Error).message, error);
    }
  };
  const load = (value: unknown): void => {
    const role = typeof value === 'object' && value !== null ? (value as { role?: unknown }).role : undefined;
    if (role === PENDING_STEP_ROLE) {
      const pending = read(pendingStepFromJSON, value);
      if (pendingStep !== undefined && pendingStep.stepId !== pending.stepId) {
        fail(`a second step waits for approval ("${pending.stepId}") while step "${pendingStep.stepId}" still does`);
      }
      pendingStep = pending;
    } else if (role === STEP_RESUMED_ROLE) {
      const stepId = read(stepResumedFromJSON, value);
      if (pendingStep?.stepId !== stepId) fail(`it completes step "${stepId}", which does not wait for approval`);
      pendingStep = undefined; // the step's messages follow
      ledger.close();
    } else if (isCompactionJSON(value)) {
      const { replaces, summary } = read(compactionFromJSON, value);
      if (pendingStep !== undefined) fail(`a compaction while step "${pendingStep.stepId}" waits for approval`);
      if (ledger.key !== undefined) fail(`a compaction while step "${ledger.key}" is open in the call ledger`);
      if (replaces > messages.length) fail(`a compaction replaces ${replaces} messages of a history of ${messages.length}`);
      messages.splice(0, replaces, summary);
    } else if (isCallRecordJSON(value)) {
      const record = read(callRecordFromJSON, value);
      read(() => ledger.apply(record), undefined);
    } else if (typeof value === 'object' && value !== null && 'token_count' in value) {
      if (typeof (value as { token_count: unknown }).token_count !== 'number') fail('token_count is not a number');
    } else {
      messages.push(read(messageFromJSON, value));
      pendingStep = undefined; // a message while a step was pending: a writer that knows nothing of it went on, so it was abandoned
      ledger.close(); // the open step's records are history now
    }
    // Every record with a token count carries the history's (the approval records too, for readers that know only that).
    if (typeof value === 'object' && value !== null && 'token_count' in value) tokenCount = (value as { token_count: number }).token_count;
    records++;
  };

  while (start < bytes.length) {
    line++;
    const newline = bytes.indexOf(NEWLINE, start);
    const end = newline === -1 ? bytes.length : newline;
    const text = decode(bytes.subarray(start, end));
    const value = text === undefined || text.trim() === '' ? undefined : parseJson(text);
    if (newline === -1) {
      // The last line, without a newline: a complete record, blank, or a torn tail.
      if (text !== undefined && text.trim() === '') return { messages, tokenCount, pendingStep, ledger, validLength: bytes.length, tornTail: undefined, needsNewline: false };
      if (value !== undefined) {
        load(value.json);
        return { messages, tokenCount, pendingStep, ledger, validLength: bytes.length, tornTail: undefined, needsNewline: true };
      }
      const tail = bytes.subarray(start);
      if (records === 0 && !RECORD_START.test(tail.toString('latin1', 0, 64))) fail(text === undefined ? 'not UTF-8 text' : 'not JSON');
      return { messages, tokenCount, pendingStep, ledger, validLength: start, tornTail: Buffer.from(tail), needsNewline: false };
    }
    if (text === undefined) fail('not UTF-8 text');
    else if (text.trim() !== '') {
      if (value === undefined) fail('not JSON');
      else load(value.json);
    }
    start = newline + 1;
  }
  return { messages, tokenCount, pendingStep, ledger, validLength: bytes.length, tornTail: undefined, needsNewline: false };
}

function decode(bytes: Uint8Array): string | undefined {
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

function parseJson(text: string): { json: unknown } | undefined {
  try {
    return { json: JSON.parse(text) as unknown };
  } catch {
    return undefined;
  }
}
