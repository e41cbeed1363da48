import { messageToJSON } from '../message/json.js';
import type { Message } from '../message/message.js';
import { AppendOnlyFile, type FileState } from './append-only-file.js';
import { ApprovalPendingError } from './approval-errors.js';
import type { AgentContext } from './context.js';
import { cutHistoryFile, keepTornTail, readHistoryFile } from './history-file.js';
import { parseJsonlHistory } from './jsonl-history.js';
import { pendingApprovals, type PendingStep } from './pending-step.js';
import { pendingStepToJSON, stepResumedToJSON } from './pending-step-json.js';

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
 *
 * A step waiting for approval is one `_pending_step` line (with a `token_count`, so that readers
 * that know nothing of it, the Python kosong included, skip it as a token count and load the whole
 * steps before it); completing it is one append of a `_step_resumed` line and the step's messages.
 */
export class LinearContext implements AgentContext {
  private readonly messages: Message[] = [];
  private tokens = 0;
  private pending: PendingStep | undefined;
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

  /** The step whose calls wait for approval, if there is one. */
  get pendingStep(): PendingStep | undefined {
    return this.pending;
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
    if (this.messages.length > 0 || this.pending !== undefined || this.file !== undefined) throw new Error('LinearContext.restore(): the context already has messages');
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
    this.pending = parsed.pendingStep;
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
   * @throws ContextFileError if the file cannot be written (see {@link ContextFileProblem});
   *   ApprovalPendingError while a step waits for approval.
   */
  async append(...messages: Message[]): Promise<void> {
    if (messages.length === 0) return;
    if (this.pending) throw new ApprovalPendingError(pendingApprovals(this.pending));
    await this.write(messages.map((m) => JSON.stringify(messageToJSON(m))));
    this.messages.push(...messages);
  }

  /**
   * Records a step whose calls wait for approval: one line, synced to disk, then in memory.
   *
   * @throws Error if another step is pending; ContextFileError if the file cannot be written.
   */
  async deferStep(pending: PendingStep): Promise<void> {
    if (this.pending !== undefined && this.pending.stepId !== pending.stepId) {
      throw new Error(`LinearContext.deferStep(): step "${this.pending.stepId}" already waits for approval`);
    }
    await this.write([JSON.stringify(pendingStepToJSON(pending, this.tokens))]);
    this.pending = pending;
  }

  /**
   * Completes the pending step: a `_step_resumed` line and the step's messages, in one append.
   *
   * @throws Error if `stepId` is not the pending step; ContextFileError if the file cannot be written.
   */
  async completeStep(stepId: string, ...messages: Message[]): Promise<void> {
    if (this.pending?.stepId !== stepId) throw new Error(`LinearContext.completeStep(): step "${stepId}" does not wait for approval`);
    await this.write([JSON.stringify(stepResumedToJSON(stepId, this.tokens)), ...messages.map((m) => JSON.stringify(messageToJSON(m)))]);
    this.messages.push(...messages);
    this.pending = undefined;
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
