import type { AgentEvent, AgentStopReason, Message, PendingApproval, TokenUsage } from '@kosong/core';
import { errorDetails, type ErrorDetails } from './typed-errors.js';

/** An error as it travels in a turn's events: its class name and message. */
export interface SerializedError {
  readonly name: string;
  readonly message: string;
  /** HTTP status of a provider error, when there was one. */
  readonly status?: number;
  /**
   * The fields of a typed error of core — a `TimeoutBudgetError` (`budget`, `limitMs`, …), a
   * `TenantLimitError` (`limit`, `max`, `current`, `retryAfterMs`, …), a `TenantBudgetExceededError`
   * — so that the submitter gets it back (`TurnFailedError.cause`).
   */
  readonly details?: ErrorDetails;
}

/** The outcome of a queued turn (the `AgentTurnResult` of the worker's agent, over all its attempts). */
export interface QueuedTurnResult {
  readonly message: Message;
  /** Steps of the turn, counting those run before a recovery. */
  readonly steps: number;
  readonly usage: TokenUsage;
  readonly stopReason: AgentStopReason;
  /** With `approval_required`: the calls that wait (submit a resumption with `TurnQueue.resume`). */
  readonly pendingApprovals?: readonly PendingApproval[];
}

/**
 * An agent event as it travels on a turn's stream: an `error` it carries (a `retry`'s) serialized
 * ({@link serializeError}), everything else as the agent emitted it.
 */
export type PublishedAgentEvent = WithSerializedError<AgentEvent>;

/** Each member of `E` with its `error`, if it has one, serialized (distributes over a union). */
type WithSerializedError<E> = E extends { readonly error: unknown } ? Omit<E, 'error'> & { readonly error: SerializedError } : E;

/**
 * What happens in a queued turn, as published on its Redis stream. The agent's own events (core's
 * `AgentEvent`, with `step` counted over the whole turn, across recoveries), plus the turn's life:
 * which worker took it, a resumption after a worker was lost, and exactly one terminal event.
 */
export type TurnEvent =
  | { readonly type: 'turn_start'; readonly turnId: string; readonly worker: string; readonly attempt: number }
  | {
      /** The worker running the turn was lost: the turn goes on from its last whole step; events of the unfinished step since that step's `step_start` are void. */
      readonly type: 'turn_resumed';
      readonly fromStep: number;
      readonly reason: string;
    }
  | PublishedAgentEvent
  | { readonly type: 'turn_end'; readonly result: QueuedTurnResult }
  | { readonly type: 'turn_failed'; readonly error: SerializedError }
  | { readonly type: 'turn_cancelled'; readonly reason: string };

/** The events that end a turn. */
export type TerminalTurnEvent = Extract<TurnEvent, { type: 'turn_end' | 'turn_failed' | 'turn_cancelled' }>;

/** Whether an event ends its turn. */
export function isTerminalTurnEvent(event: TurnEvent): event is TerminalTurnEvent {
  return event.type === 'turn_end' || event.type === 'turn_failed' || event.type === 'turn_cancelled';
}

/** An error, for the wire. Never throws. */
export function serializeError(error: unknown): SerializedError {
  if (error instanceof Error) {
    const status = (error as { status?: unknown }).status;
    const details = errorDetails(error);
    return { name: error.name, message: error.message || error.name, ...(typeof status === 'number' ? { status } : {}), ...(details === undefined ? {} : { details }) };
  }
  return { name: 'Error', message: typeof error === 'string' ? error : safeString(error) };
}

function safeString(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** An agent event as a turn event, its step counted from `stepOffset`. */
export function fromAgentEvent(event: AgentEvent, stepOffset: number): PublishedAgentEvent {
  const step = event.step + stepOffset;
  return 'error' in event ? { ...event, step, error: serializeError(event.error) } : { ...event, step };
}
