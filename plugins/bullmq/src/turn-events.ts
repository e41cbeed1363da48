import type {
  AgentEvent,
  AgentStopReason,
  ApprovalDecision,
  FinishReason,
  Message,
  PendingApproval,
  StreamedMessagePart,
  TokenUsage,
  ToolCall,
  ToolResult,
} from '@kosong/core';

/** An error as it travels in a turn's events: its class name and message. */
export interface SerializedError {
  readonly name: string;
  readonly message: string;
  /** HTTP status of a provider error, when there was one. */
  readonly status?: number;
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
 * What happens in a queued turn, as published on its Redis stream. The agent's own events (with
 * `step` counted over the whole turn, across recoveries), plus the turn's life: which worker took
 * it, a resumption after a worker was lost, and exactly one terminal event.
 */
export type TurnEvent =
  | { readonly type: 'turn_start'; readonly turnId: string; readonly worker: string; readonly attempt: number }
  | {
      /** The worker running the turn was lost: the turn goes on from its last whole step; events of the unfinished step since that step's `step_start` are void. */
      readonly type: 'turn_resumed';
      readonly fromStep: number;
      readonly reason: string;
    }
  | { readonly type: 'step_start'; readonly step: number; readonly attempt: number }
  | { readonly type: 'part'; readonly step: number; readonly part: StreamedMessagePart }
  | { readonly type: 'tool_call'; readonly step: number; readonly toolCall: ToolCall }
  | { readonly type: 'tool_result'; readonly step: number; readonly result: ToolResult }
  | { readonly type: 'approval_request'; readonly step: number; readonly toolCall: ToolCall; readonly index: number }
  | { readonly type: 'approval_decision'; readonly step: number; readonly toolCall: ToolCall; readonly index: number; readonly decision: ApprovalDecision }
  | {
      readonly type: 'retry';
      readonly step: number;
      readonly attempt: number;
      readonly nextAttempt: number;
      readonly delayMs: number;
      readonly error: SerializedError;
    }
  | {
      readonly type: 'step_end';
      readonly step: number;
      readonly message: Message;
      readonly toolResults: readonly ToolResult[];
      readonly usage: TokenUsage | undefined;
      readonly finishReason: FinishReason | undefined;
    }
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
    return { name: error.name, message: error.message || error.name, ...(typeof status === 'number' ? { status } : {}) };
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
export function fromAgentEvent(event: AgentEvent, stepOffset: number): TurnEvent {
  const step = event.step + stepOffset;
  switch (event.type) {
    case 'retry':
      return { ...event, step, error: serializeError(event.error) };
    default:
      return { ...event, step };
  }
}
