import type { AgentEvent, AgentTurnResult } from '@kosong/core';
import { describeTimeout } from '../timeout-failure.js';

/** Shows an agent session: a terminal (with or without colour and spinner), or JSON lines. */
export interface Renderer {
  /** A turn begins with this user input. */
  turnStart(input: string): void;
  /** Something happened in the turn. */
  event(event: AgentEvent): void;
  /** The turn ended normally. */
  turnEnd(result: AgentTurnResult): void;
  /** The turn failed for good. */
  turnFailed(error: unknown): void;
  /**
   * The user interrupted the running turn (Ctrl-C): the step is not in the history; calls of it that
   * had started are recorded, and the next turn completes it first (telling the model they were interrupted).
   */
  interrupted(): void;
  /** A line of information (e.g. how many messages a resumed session has). */
  info(message: string): void;
  /**
   * A question to the user is about to be drawn (e.g. whether to run a bash command): stop the
   * spinner, end the line, and hold back output until {@link resume}, so nothing draws over it.
   */
  pause(): void;
  /** The question was answered (or taken back): write what was held back, and go on. */
  resume(): void;
  /** Stops timers; the renderer is not used again. */
  close(): void;
}

/** One line describing a thrown value (a time budget that ran out: which flag, how long). */
export function describeFailure(error: unknown): string {
  const timeout = describeTimeout(error);
  if (timeout !== undefined) return timeout;
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}
