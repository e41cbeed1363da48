import type { Message } from '../message/message.js';
import type { ToolCall } from '../message/parts.js';
import type { FinishReason } from '../provider/chat-provider.js';
import type { TokenUsage } from '../provider/token-usage.js';
import type { ToolResult } from '../tooling/tool-result.js';

/**
 * A step whose calls wait for approval, as a context keeps it between `Agent.run` (which deferred
 * them) and `Agent.resume` (which completes the step, in this process or another). It is not part
 * of the history: the history holds whole steps only, and this one is whole once its waiting calls
 * are decided and run.
 */
export interface PendingStep {
  /** The id of the step (its `stepId`); the context's key for it. */
  readonly stepId: string;
  /** The step's number in its turn (from 1): the resumed turn goes on from here. */
  readonly step: number;
  /** The assistant message of the step. */
  readonly message: Message;
  /**
   * Index-aligned with the message's tool calls: the result of each call that settled (ran, was
   * denied, failed), `undefined` for each call that waits for a decision.
   */
  readonly results: readonly (ToolResult | undefined)[];
  /** What the step's generation used. */
  readonly usage: TokenUsage | undefined;
  /** What the turn's earlier steps used (the resumed turn's usage starts from it). */
  readonly turnUsage: TokenUsage;
  /** The provider's id of the message. */
  readonly messageId: string | undefined;
  readonly finishReason: FinishReason | undefined;
  /** When the calls were deferred, in ms since the epoch. */
  readonly deferredAt: number;
  /**
   * After this time (ms since the epoch) the waiting calls are denied as timed out, whatever
   * decisions come; `undefined`: they wait for ever. Set from the agent's `approvalTimeoutMs`.
   */
  readonly expiresAt: number | undefined;
  /** The step's key in the call ledger (its calls' idempotency keys start with it); absent in steps of older versions. */
  readonly key?: string;
  /** The turn the step belongs to, whose later steps the resumed turn goes on with (see `AgentRunOptions.turn`). */
  readonly turn?: { readonly id: string; readonly stepsBefore: number };
}

/** A call that waits for approval. */
export interface PendingApproval {
  readonly toolCall: ToolCall;
  /** Its position in the step's tool calls. */
  readonly index: number;
  /** The step it belongs to. */
  readonly stepId: string;
}

/** The calls of a pending step that wait for approval, in call order. */
export function pendingApprovals(pending: PendingStep): PendingApproval[] {
  const calls = pending.message.toolCalls ?? [];
  return calls.flatMap((toolCall, index) => (pending.results[index] === undefined ? [{ toolCall, index, stepId: pending.stepId }] : []));
}
