import type { Message } from '../message/message.js';

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
 */
export interface AgentContext {
  /** The messages so far, in order (a read-only view; copy it to keep a snapshot). */
  readonly history: readonly Message[];
  /** The last token count recorded with {@link AgentContext.markTokenCount}. */
  readonly tokenCount: number;
  /**
   * Appends messages — a turn's input, or one whole step — atomically: after it resolves, the
   * history and the store hold all of them; if it rejects, neither holds any.
   */
  append(...messages: Message[]): Promise<void>;
  /** Records the token count of the history (e.g. the last step's total usage). */
  markTokenCount(count: number): Promise<void>;
  /** Loads the stored history into this (empty) context. */
  restore(): Promise<ContextRestoreReport>;
  /** Releases what the context holds (a file, a connection); appends in flight finish first. */
  close(): Promise<void>;
}
