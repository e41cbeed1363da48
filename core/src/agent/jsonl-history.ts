import { messageFromJSON } from '../message/json.js';
import type { Message } from '../message/message.js';
import { ContextCorruptedError } from './context-errors.js';

/** A JSONL history file, checked from its first byte to its last. */
export interface ParsedHistory {
  readonly messages: readonly Message[];
  /** The last `_usage` record's token count, if there was one. */
  readonly tokenCount: number | undefined;
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
  let records = 0;
  let line = 0;
  let start = 0;
  const fail = (detail: string, cause?: unknown): never => {
    throw new ContextCorruptedError(path, line, detail, { notAHistoryFile: records === 0, cause });
  };
  const load = (value: unknown): void => {
    if (typeof value === 'object' && value !== null && 'token_count' in value) {
      const count = (value as { token_count: unknown }).token_count;
      if (typeof count !== 'number') fail('token_count is not a number');
      tokenCount = count as number;
    } else {
      try {
        messages.push(messageFromJSON(value));
      } catch (error) {
        fail((error as Error).message, error);
      }
    }
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
      if (text !== undefined && text.trim() === '') return { messages, tokenCount, validLength: bytes.length, tornTail: undefined, needsNewline: false };
      if (value !== undefined) {
        load(value.json);
        return { messages, tokenCount, validLength: bytes.length, tornTail: undefined, needsNewline: true };
      }
      const tail = bytes.subarray(start);
      if (records === 0 && !RECORD_START.test(tail.toString('latin1', 0, 64))) fail(text === undefined ? 'not UTF-8 text' : 'not JSON');
      return { messages, tokenCount, validLength: start, tornTail: Buffer.from(tail), needsNewline: false };
    }
    if (text === undefined) fail('not UTF-8 text');
    else if (text.trim() !== '') {
      if (value === undefined) fail('not JSON');
      else load(value.json);
    }
    start = newline + 1;
  }
  return { messages, tokenCount, validLength: bytes.length, tornTail: undefined, needsNewline: false };
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
