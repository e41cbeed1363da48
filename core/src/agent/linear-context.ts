import { checkKnownOptions, type KnownOptions } from '../known-options.js';
import { messageToJSON } from '../message/json.js';
import type { Message } from '../message/message.js';
import { AppendOnlyFile, type FileState } from './append-only-file.js';
import { ApprovalPendingError } from './approval-errors.js';
import { OpenStepState, type CallLedger, type CallOutcomeRecord, type CallStartRecord, type OpenStep, type RecordStartOptions } from './call-ledger.js';
import type { CompactionRecord } from './compaction.js';
import type { AgentContext } from './context.js';
import { callRecordToJSON } from './ledger-json.js';
import { SessionLock } from './session-lock.js';
import { cutHistoryFile, keepTornTail, readHistoryFile } from './history-file.js';
import { parseJsonlHistory } from './jsonl-history.js';
import { pendingApprovals, type PendingStep } from './pending-step.js';
import { compactionToJSON } from './compaction-json.js';
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

/** Options of a {@link LinearContext} with a file. */
export interface LinearContextOptions {
  /**
   * Hold the session's lock file (`<file>.lock`) from the first `restore()` or write until `close()`,
   * so that no other context — in this process or another — loads or writes the session meanwhile
   * (default `true`). A lock whose process died is taken over at once.
   */
  readonly lock?: boolean;
  /** How long the lock of a process on another host stays valid without its heartbeat (default 10 s). */
  readonly lockStaleMs?: number;
  /**
   * Sync each call's start record to disk before the call runs (default `true`). `false`: the record
   * is only written — a crash of the process (SIGKILL, out of memory, a throw) cannot lose it, a
   * power cut or a crash of the system can, and a call that started then may run again. It saves
   * the sync to disk before the calls of a chunk run (about a millisecond on common disks).
   */
  readonly syncCallStarts?: boolean;
}

const OPTION_NAMES: KnownOptions<LinearContextOptions> = { lock: true, lockStaleMs: true, syncCallStarts: true };

const RESOLVED: Promise<void> = Promise.resolve();

/** Resolves on the next turn of the event loop: a batch opened now takes what else this turn writes (the calls a stream completed at once share one sync). */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** A batch of lines written by one append (lines queued while the previous write runs join it). */
interface Batch {
  readonly lines: string[];
  sync: boolean;
  readonly done: Promise<void>;
}

/**
 * A conversation history: messages in order, in memory, optionally persisted to a JSONL file.
 *
 * The file is append-only, one message per line, in the Python kosong wire format (so files are
 * interchangeable), plus `{"role":"_usage","token_count":N}` lines for the token count. Each
 * {@link LinearContext.append} writes its messages in one append (synced to disk before it
 * resolves, but for the case it names), so a step's assistant message and tool results land
 * together or not at all: a write
 * cut short (disk full, file size limit) is undone and rejects with a `ContextFileError`, and
 * nothing is ever written into a file that was renamed, deleted or changed by someone else.
 *
 * A step waiting for approval is one `_pending_step` line (with a `token_count`, so that readers
 * that know nothing of it, the Python kosong included, skip it as a token count and load the whole
 * steps before it); completing it is one append of a `_step_resumed` line and the step's messages.
 *
 * The call ledger is in the same file: a `_call_started` line, synced to disk before the call runs,
 * and a `_call_settled` line when it settles (both with a `token_count`, skipped by other readers).
 * The next message closes the step they belong to. What is written in one turn of the event loop,
 * or while a write runs, goes into one write (one sync for all: the calls of a chunk of the stream
 * share it). The step's own append is synced with the next synced write (see `append`).
 *
 * With a file, the context holds the session's lock (see {@link LinearContextOptions.lock}).
 */
export class LinearContext implements AgentContext, CallLedger {
  private readonly messages: Message[] = [];
  private tokens = 0;
  private pending: PendingStep | undefined;
  private file: AppendOnlyFile | undefined;
  /** The file as {@link LinearContext.restore} or the last writer left it (`null`: there was none); checked when it is opened. */
  private restored: FileState | null | undefined;
  private needsNewline = false;
  private queue: Promise<void> = Promise.resolve();
  private batch: Batch | undefined;
  private ledgerState = new OpenStepState();
  private lock: SessionLock | undefined;
  private locking: Promise<SessionLock> | undefined;
  private readonly options: LinearContextOptions;

  /**
   * @param path a JSONL file to persist to (created on first append); none: memory only.
   * @throws TypeError for an option it does not know.
   */
  constructor(
    readonly path?: string,
    options: LinearContextOptions = {},
  ) {
    checkKnownOptions('LinearContext', options, OPTION_NAMES);
    this.options = options;
  }

  /** The call ledger of this context: records in its file (in memory without one). */
  get ledger(): CallLedger {
    return this;
  }

  /** The step whose calls were recorded and that is not in the history, if any. */
  get openStep(): OpenStep | undefined {
    return this.ledgerState.openStep;
  }

  /**
   * Records a call's start: one line, synced to disk (with any other start recorded meanwhile), or
   * only written (`sync: false`: a process crash does not lose it, a power cut may).
   */
  recordStart(record: CallStartRecord, options: RecordStartOptions = {}): Promise<void> | undefined {
    if (this.path === undefined) {
      this.ledgerState.apply(record); // in memory: the state is the ledger, recorded at once
      return undefined;
    }
    return this.record(record, options.sync !== false);
  }

  /** Records a call's outcome: one line, synced with the next synced write (in memory: at once, `undefined`). */
  recordOutcome(record: CallOutcomeRecord): Promise<void> | undefined {
    if (this.path === undefined) {
      this.ledgerState.apply(record); // in memory: the state is the ledger, recorded at once
      return undefined;
    }
    return this.record(record, false);
  }

  private record(record: CallStartRecord | CallOutcomeRecord, sync: boolean): Promise<void> {
    try {
      this.ledgerState.apply(record);
      if (this.path === undefined) return RESOLVED; // in memory: the state is the ledger
      return this.write([JSON.stringify(callRecordToJSON(record, this.tokens))], sync && this.options.syncCallStarts !== false);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Takes the session's lock, unless it is held already or not wanted. */
  private acquireLock(): Promise<unknown> {
    if (this.path === undefined || this.options.lock === false || this.lock !== undefined) return Promise.resolve();
    const path = this.path;
    this.locking ??= SessionLock.acquire(path, this.options.lockStaleMs === undefined ? {} : { staleMs: this.options.lockStaleMs }).then(
      (lock) => (this.lock = lock),
      (error: unknown) => {
        this.locking = undefined;
        throw error;
      },
    );
    return this.locking;
  }

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
   *   (`missing-directory`), the path is not a regular file (`not-a-file`), or another context holds
   *   the session (`locked`); an Error if messages were already added to this context.
   */
  async restore(): Promise<RestoreReport> {
    if (this.messages.length > 0 || this.pending !== undefined || this.file !== undefined) throw new Error('LinearContext.restore(): the context already has messages');
    if (this.path === undefined) return { messages: 0, recoveredTornLine: false };
    await this.acquireLock();
    try {
      return await this.load(this.path);
    } catch (error) {
      await this.releaseLock();
      throw error;
    }
  }

  private async load(path: string): Promise<RestoreReport> {
    const content = await readHistoryFile(path);
    if (content === null) {
      this.restored = null;
      return { messages: 0, recoveredTornLine: false };
    }
    const parsed = parseJsonlHistory(content.bytes, path);
    let tornLineSavedTo: string | undefined;
    if (parsed.tornTail) {
      tornLineSavedTo = await keepTornTail(path, parsed.tornTail);
      await cutHistoryFile(path, content.state, parsed.validLength);
    }
    this.messages.push(...parsed.messages);
    if (parsed.tokenCount !== undefined) this.tokens = parsed.tokenCount;
    this.pending = parsed.pendingStep;
    const open = parsed.ledger;
    this.ledgerState = open;
    this.needsNewline = parsed.needsNewline;
    this.restored = { ...content.state, size: parsed.validLength };
    return tornLineSavedTo === undefined
      ? { messages: this.messages.length, recoveredTornLine: false }
      : { messages: this.messages.length, recoveredTornLine: true, tornLineSavedTo };
  }

  /**
   * Appends messages: first to the file (in one append), then to memory. If the write fails,
   * neither has them. The append is synced to disk before it resolves, except for the append that
   * closes a step whose calls the ledger recorded: that one is written (a crash of the process
   * cannot lose it) and synced with the next synced write — the next call's start, the turn's
   * answer, a deferred step, or `close()`. A power cut before then loses at most that step's
   * messages and outcomes; its start records are on disk, so the next run completes the step from
   * them and runs none of its calls again unless their replay policy allows it.
   *
   * @throws ContextFileError if the file cannot be written (see {@link ContextFileProblem});
   *   ApprovalPendingError while a step waits for approval.
   */
  async append(...messages: Message[]): Promise<void> {
    if (messages.length === 0) return;
    if (this.pending) throw new ApprovalPendingError(pendingApprovals(this.pending));
    // A step whose calls the ledger recorded is written without a sync of its own: its start records are on disk already.
    if (this.path !== undefined) {
      const closesRecordedStep = this.ledgerState.key !== undefined;
      await this.write(
        messages.map((m) => JSON.stringify(messageToJSON(m))),
        !closesRecordedStep,
      );
    }
    this.messages.push(...messages);
    this.ledgerState.close();
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
    this.ledgerState.close();
  }

  /**
   * Compacts the history: one `_compaction` line (synced to disk), holding the summary and how
   * many messages it replaces, then in memory. The lines of the replaced messages stay in the file:
   * a reader that knows nothing of compaction (the Python kosong, older versions) skips the line as
   * a token count and loads the whole original; a crash while it is written leaves a torn line,
   * cut off by the next `restore()`, so the history is the old one.
   *
   * @throws Error while a step waits for approval or is open in the ledger, or when `replaces` is not
   *   between 1 and the history's length; ContextFileError if the file cannot be written.
   */
  async compact(record: CompactionRecord): Promise<void> {
    const { replaces, summary } = record;
    if (this.pending !== undefined) throw new ApprovalPendingError(pendingApprovals(this.pending));
    if (this.ledgerState.key !== undefined) throw new Error('LinearContext.compact(): a step is open in the call ledger');
    if (!Number.isSafeInteger(replaces) || replaces < 1 || replaces > this.messages.length) {
      throw new Error(`LinearContext.compact(): replaces must be between 1 and ${this.messages.length} (the history's length), got ${String(replaces)}`);
    }
    await this.write([JSON.stringify(compactionToJSON(record, this.tokens))]);
    this.messages.splice(0, replaces, summary);
  }

  /** Records the token count of the history (e.g. the last step's total usage). */
  markTokenCount(count: number): Promise<void> {
    this.tokens = count;
    return this.write([JSON.stringify({ role: '_usage', token_count: count })]);
  }

  /** Syncs to disk what was written without a sync (the append that closed a recorded step), once the writes in flight are done. */
  flush(): Promise<void> {
    const flushed = this.queue.then(() => this.file?.sync());
    this.queue = flushed.catch(() => undefined);
    return flushed;
  }

  /** Closes the file, if one is open, and releases the session's lock. */
  async close(): Promise<void> {
    await this.queue;
    if (this.file !== undefined) {
      this.restored = this.file.state; // a later append reopens it, and checks that nothing else wrote to it meanwhile
      await this.file.close();
      this.file = undefined;
    }
    await this.releaseLock();
  }

  private async releaseLock(): Promise<void> {
    const lock = this.lock ?? (await this.locking?.catch(() => undefined));
    this.lock = undefined;
    this.locking = undefined;
    await lock?.release();
  }

  /**
   * Appends lines in one write (synced to disk when `sync`): lines queued while a write runs join
   * the next one, which is synced if any of them asks for it, and all of them land or none.
   */
  private write(lines: readonly string[], sync = true): Promise<void> {
    if (this.path === undefined || lines.length === 0) return Promise.resolve();
    let batch = this.batch;
    if (batch === undefined) {
      const path = this.path;
      let start!: () => void;
      const started = new Promise<void>((resolve) => (start = resolve));
      const done = started.then(async () => {
        this.batch = undefined; // what comes now goes into the next write
        await this.acquireLock();
        this.file ??= await AppendOnlyFile.open(path, this.restored);
        const prefix = this.needsNewline ? '\n' : '';
        await this.file.append(Buffer.from(prefix + current.lines.join('\n') + '\n', 'utf8'), current.sync);
        this.needsNewline = false;
      });
      const current: Batch = (batch = this.batch = { lines: [], sync: false, done });
      this.queue = this.queue.then(nextTurn).then(start).then(() => done.catch(() => undefined));
    }
    batch.lines.push(...lines);
    if (sync) batch.sync = true;
    return batch.done;
  }
}
