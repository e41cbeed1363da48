import { open, readFile, truncate, type FileHandle } from 'node:fs/promises';
import { errorMarker, hasErrorMarker, markError } from '../error-marker.js';
import { messageFromJSON, messageToJSON } from '../message/json.js';
import type { Message } from '../message/message.js';
import type { AgentContext } from './context.js';

const CONTEXT_CORRUPTED_ERROR = errorMarker('ContextCorruptedError');

/** A JSONL history file is damaged somewhere other than its last line. */
export class ContextCorruptedError extends Error {
  constructor(
    readonly path: string,
    /** 1-based number of the bad line. */
    readonly line: number,
    detail: string,
    options?: ErrorOptions,
  ) {
    super(`${path}: line ${line} is not a valid history record (${detail}); refusing to load a file corrupted in the middle`, options);
    this.name = 'ContextCorruptedError';
    markError(this, CONTEXT_CORRUPTED_ERROR);
  }

  /** Whether `error` is a {@link ContextCorruptedError}. */
  static isInstance(error: unknown): error is ContextCorruptedError {
    return hasErrorMarker(error, CONTEXT_CORRUPTED_ERROR);
  }
}

/** What {@link LinearContext.restore} found. */
export interface RestoreReport {
  /** Messages loaded. */
  readonly messages: number;
  /** Whether a torn last line (an append cut short by a crash) was cut off the file. */
  readonly recoveredTornLine: boolean;
}

/**
 * A conversation history: messages in order, in memory, optionally persisted to a JSONL file.
 *
 * The file is append-only, one message per line, in the Python kosong wire format (so files are
 * interchangeable), plus `{"role":"_usage","token_count":N}` lines for the token count. Each
 * {@link LinearContext.append} writes its messages in one write and syncs it to disk before
 * resolving, so a step's assistant message and tool results land together or not at all.
 */
export class LinearContext implements AgentContext {
  private readonly messages: Message[] = [];
  private tokens = 0;
  private file: FileHandle | undefined;
  private needsNewline = false;
  private queue: Promise<void> = Promise.resolve();

  /** @param path a JSONL file to persist to (created on first append); none: memory only. */
  constructor(readonly path?: string) {}

  /** The messages so far (a read-only view; copy it to keep a snapshot). */
  get history(): readonly Message[] {
    return this.messages;
  }

  /** The last token count marked. */
  get tokenCount(): number {
    return this.tokens;
  }

  /**
   * Loads the file. A torn last line (no newline and not parseable: an append cut short) is cut off
   * and reported; a bad line anywhere else is a {@link ContextCorruptedError} naming the line.
   * A missing file is an empty history.
   *
   * @throws if messages were already added to this context.
   */
  async restore(): Promise<RestoreReport> {
    if (this.messages.length > 0) throw new Error('LinearContext.restore(): the context already has messages');
    if (this.path === undefined) return { messages: 0, recoveredTornLine: false };
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { messages: 0, recoveredTornLine: false };
      throw error;
    }
    const lines = text.split('\n');
    const last = lines.pop()!; // '' when the file ends with a newline
    let recoveredTornLine = false;
    const parsedLast = last.trim() === '' ? undefined : tryParse(last);
    if (last.trim() !== '' && parsedLast === undefined) {
      await truncate(this.path, Buffer.byteLength(text, 'utf8') - Buffer.byteLength(last, 'utf8'));
      recoveredTornLine = true;
    } else if (parsedLast !== undefined) {
      lines.push(last);
      this.needsNewline = true;
    }
    lines.forEach((line, index) => {
      if (line.trim() === '') return;
      const value = tryParse(line);
      if (value === undefined) throw new ContextCorruptedError(this.path!, index + 1, 'not JSON');
      this.load(value, index + 1);
    });
    return { messages: this.messages.length, recoveredTornLine };
  }

  /**
   * Appends messages: first to the file (durably, in one write), then to memory. If the write
   * fails, neither has them.
   */
  async append(...messages: Message[]): Promise<void> {
    await this.write(messages.map((m) => JSON.stringify(messageToJSON(m))));
    this.messages.push(...messages);
  }

  /** Records the token count of the history (e.g. the last step's total usage). */
  markTokenCount(count: number): Promise<void> {
    this.tokens = count;
    return this.write([JSON.stringify({ role: '_usage', token_count: count })]);
  }

  /** Closes the file, if one is open. */
  async close(): Promise<void> {
    await this.queue;
    await this.file?.close();
    this.file = undefined;
  }

  private load(value: unknown, line: number): void {
    if (typeof value === 'object' && value !== null && 'token_count' in value) {
      const count = (value as { token_count: unknown }).token_count;
      if (typeof count !== 'number') throw new ContextCorruptedError(this.path!, line, 'token_count is not a number');
      this.tokens = count;
      return;
    }
    try {
      this.messages.push(messageFromJSON(value));
    } catch (error) {
      throw new ContextCorruptedError(this.path!, line, (error as Error).message, { cause: error });
    }
  }

  private write(lines: readonly string[]): Promise<void> {
    if (this.path === undefined || lines.length === 0) return Promise.resolve();
    const path = this.path;
    const run = this.queue.then(async () => {
      this.file ??= await open(path, 'a');
      const prefix = this.needsNewline ? '\n' : '';
      await this.file.write(prefix + lines.join('\n') + '\n');
      await this.file.datasync();
      this.needsNewline = false;
    });
    this.queue = run.catch(() => undefined);
    return run;
  }
}

function tryParse(line: string): unknown {
  try {
    return JSON.parse(line) as unknown;
  } catch {
    return undefined;
  }
}
