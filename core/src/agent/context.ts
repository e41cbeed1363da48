import type { Message } from '../message/message.js';
import type { CallLedger } from './call-ledger.js';
import type { CompactionRecord } from './compaction.js';
import type { PendingStep } from './pending-step.js';

/** What a context's `restore()` found. */
export interface ContextRestoreReport {
  /** Messages loaded. */
  readonly messages: number;
}

/**
 * The conversation an {@link Agent} works on: `LinearContext` (memory, or a JSONL file) or any other
 * store with the same promises, such as a session kept in Redis.
 *
 * The agent reads `history` before each step and calls `append` once per finished step, with the
 * step's assistant message and its tool messages in call order. An implementation must store those
 * messages all together or not at all, so the history only ever holds whole steps.
 *
 * A step whose calls wait for approval is not in the history: the agent records it with
 * `deferStep` (durably: it must survive the process), and later completes it with `completeStep`,
 * which adds its messages and drops the pending step in one atomic write. While a step is pending,
 * `append` is refused.
 */
export interface AgentContext {
  /** The messages so far, in order (a read-only view; copy it to keep a snapshot). */
  readonly history: readonly Message[];
  /** The last token count recorded with {@link AgentContext.markTokenCount}. */
  readonly tokenCount: number;
  /**
   * Appends messages — a turn's input, or one whole step — atomically: after it resolves, the
   * history and the store hold all of them; if it rejects, neither holds any. Refused (an
   * `ApprovalPendingError`) while a step is pending. The append that closes a step whose calls the
   * ledger recorded may resolve before the store has it durably (synced, acknowledged): the
   * ledger's records hold the step until then, and {@link AgentContext.flush} waits for it.
   */
  append(...messages: Message[]): Promise<void>;
  /** Records the token count of the history (e.g. the last step's total usage). */
  markTokenCount(count: number): Promise<void>;
  /** The step whose calls wait for approval, if there is one (loaded by `restore`, too). */
  readonly pendingStep: PendingStep | undefined;
  /**
   * Records a step whose calls wait for approval, durably and atomically (all of it or nothing). A
   * pending step of the same `stepId` is replaced (some of its calls were decided, others deferred again).
   *
   * @throws Error if another step is pending.
   */
  deferStep(pending: PendingStep): Promise<void>;
  /**
   * Completes the pending step `stepId`: appends its messages (the assistant message and one tool
   * message per call, in call order) and drops the pending step, atomically.
   *
   * @throws Error if `stepId` is not the pending step.
   */
  completeStep(stepId: string, ...messages: Message[]): Promise<void>;
  /**
   * The durable call ledger, in the store of the history (see {@link CallLedger}). A context without
   * one gets a ledger in memory from the agent: a retried step never runs a call twice in this
   * process, but nothing is promised across processes.
   */
  readonly ledger?: CallLedger;
  /** A name of the session for the calls' idempotency keys (a Redis context: its tenant and session); none: the turn id alone. */
  readonly sessionKey?: string;
  /**
   * Claims the context for one turn (a run, or a resume) across processes, when the store is shared
   * (in this process the agent claims it itself); resolves with the release.
   *
   * @throws ResumeConflictError when another holds it.
   */
  claim?(): Promise<() => Promise<void>>;
  /**
   * Makes everything appended so far as durable as the store makes it, when an append may resolve
   * before (the append that closes a step whose calls the ledger recorded: its records hold the step
   * meanwhile). The agent calls it before a turn (a run or a resume) returns.
   *
   * @throws the error of such an append, when the store refused it.
   */
  flush?(): Promise<void>;
  /**
   * Replaces the first `record.replaces` messages of the history with `record.summary`, atomically
   * (the history is the old one or the new one, never a mix, also across a crash), keeping what it
   * replaced in the store (a JSONL file keeps the lines; readers that do not know compaction load
   * the whole original). Optional: an agent with `compaction` needs it.
   *
   * @throws Error while a step is pending or open in the ledger, or for a bad `replaces`.
   */
  compact?(record: CompactionRecord): Promise<void>;
  /** Loads the stored history into this (empty) context. */
  restore(): Promise<ContextRestoreReport>;
  /** Releases what the context holds (a file, a connection); appends in flight finish first. */
  close(): Promise<void>;
}
