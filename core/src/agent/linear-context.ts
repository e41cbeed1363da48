import { messageToJSON } from '../message/json.js';
import type { Message } from '../message/message.js';
import { AppendOnlyFile, type FileState } from './append-only-file.js';
import type { AgentContext } from './context.js';
import { cutHistoryFile, keepTornTail, readHistoryFile } from './history-file.js';
import { parseJsonlHistory } from './jsonl-history.js';


/** What {@link LinearContext.restore} found. */
export interface RestoreReport {
  /** Messages loaded. */
  readonly messages: number;
  /** Whether a torn last line (an append cut short by a crash) was cut off the file. */
  readonly recoveredTornLine: boolean;
  /** Where the torn last line was kept (`<file>.torn-<UTC time>`), when there was one. */
  readonly tornLineSavedTo?: string;
}

/**
 * A conversation history: messages in order, in memory, optionally persisted to a JSONL file.
 *
 * The file is append-only, one message per line, in the Python kosong wire format (so files are
 * interchangeable), plus `{"role":"_usage","token_count":N}` lines for the token count. Each
 * {@link LinearContext.append} writes its messages in one append and syncs it to disk before
 * resolving, so a step's assistant message and tool results land together or not at all: a write
 * cut short (disk full, file size limit) is undone and rejects with a `ContextFileError`, and
 * nothing is ever written into a file that was renamed, deleted or changed by someone else.
 */
export class LinearContext implements AgentContext {
  private readonly messages: Message[] = [];
  private tokens = 0;
  private file: AppendOnlyFile | undefined;
  /** The file as {@link LinearContext.restore} or the last writer left it (`null`: there was none); checked when it is opened. */
  private restored: FileState | null | undefined;
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
   * Loads the file, after checking all of it: nothing changes (neither the file nor this context)
   * unless every line is a valid record, except for a torn last line (no newline, not JSON: an
   * append cut short) that follows whole records. That line is cut off, kept beside the file as
   * `<file>.torn-<UTC time>`, and reported. A missing file is an empty history.
   *
   * @throws ContextCorruptedError naming the first bad line (with `notAHistoryFile` when no record
   *   precedes it: a text file, random bytes); ContextFileError when the directory does not exist
   *   (`missing-directory`) or the path is not a regular file (`not-a-file`); an Error if messages
   *   were already added to this context.
   */
  async restore(): Promise<RestoreReport> {
    if (this.messages.length > 0 || this.file !== undefined) throw new Error('LinearContext.restore(): the context already has messages');
    if (this.path === undefined) return { messages: 0, recoveredTornLine: false };
    const content = await readHistoryFile(this.path);
    if (content === null) {
      this.restored = null;
      return { messages: 0, recoveredTornLine: false };
    }
    const parsed = parseJsonlHistory(content.bytes, this.path);
    let tornLineSavedTo: string | undefined;
    if (parsed.tornTail) {
      tornLineSavedTo = await keepTornTail(this.path, parsed.tornTail);
      await cutHistoryFile(this.path, content.state, parsed.validLength);
    }
    this.messages.push(...parsed.messages);
    if (parsed.tokenCount !== undefined) this.tokens = parsed.tokenCount;
    this.needsNewline = parsed.needsNewline;
    this.restored = { ...content.state, size: parsed.validLength };
    return tornLineSavedTo === undefined
      ? { messages: this.messages.length, recoveredTornLine: false }
      : { messages: this.messages.length, recoveredTornLine: true, tornLineSavedTo };
  }

  /**
   * Appends messages: first to the file (durably, in one append), then to memory. If the write
   * fails, neither has them.
   *
   * @throws ContextFileError if the file cannot be written (see {@link ContextFileProblem}).
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
    if (this.file === undefined) return;
    this.restored = this.file.state; // a later append reopens it, and checks that nothing else wrote to it meanwhile
    await this.file.close();
    this.file = undefined;
  }

  private write(lines: readonly string[]): Promise<void> {
    if (this.path === undefined || lines.length === 0) return Promise.resolve();
    const path = this.path;
    const run = this.queue.then(async () => {
      this.file ??= await AppendOnlyFile.open(path, this.restored);
      const prefix = this.needsNewline ? '\n' : '';
      await this.file.append(Buffer.from(prefix + lines.join('\n') + '\n', 'utf8'));
      this.needsNewline = false;
    });
    this.queue = run.catch(() => undefined);
    return run;
  }
}
