import type { ToolCall } from '../message/parts.js';
import type { ReplayPolicy } from './replay-policy.js';
import type { Tool } from './tool.js';
import type { ToolResult } from './tool-result.js';
import { toolNotFound } from './tool-errors.js';

/**
 * What a toolset gets with each call.
 *
 * @typeParam TContext - the type of the run's {@link ToolContext.context} value.
 */
export interface ToolContext<TContext = unknown> {
  /** Aborted when the step no longer wants the result (abort, provider error, cleanup). Honour it. */
  readonly signal: AbortSignal;
  /** The call being handled. */
  readonly toolCall: ToolCall;
  /** The id of the step the call belongs to, for logs and correlation. */
  readonly stepId: string;
  /** Position of the call in the step's tool calls (`step()` always sets it); with `stepId`, a unique key of the call. */
  readonly index?: number;
  /**
   * A key of this call to hand to an external API as its idempotency key (a payment, an email, a
   * job): `step()` always sets it. Under an agent (`Agent`, `kernel.agent()`), it is the call's
   * stable identity — session, turn, step of the turn, call index — the same when the step is done
   * again after a crash, a takeover by another worker, a resumed approval or a retry, so an API that
   * honours idempotency keys performs the effect once. For a bare `step()` it is the step id and the
   * index (unique, but a new step gets a new one).
   */
  readonly idempotencyKey?: string;
  /**
   * The run's context value, as given to `step({ context })`, `runner.step({ context })` or
   * `agent.run(input, { context })`: request-scoped data (the user, their auth, a database handle)
   * without globals. `undefined` when none was given. The runtime never reads it; each call sees
   * the value of its own run, however many runs are in flight. It does not cross processes: a
   * remote toolset's worker does not get it.
   */
  readonly context?: TContext | undefined;
}

/**
 * A set of tools the model may call.
 *
 * `handle` is called while the model is still streaming, so it must not block: start the work and
 * return a promise. It may return a result directly, a promise of one, or throw: the step treats all
 * three alike, and a throw (or a rejection) becomes an error result. Return error results for bad
 * calls (unknown tool, bad arguments) rather than throwing, so the model is told what went wrong.
 *
 * @typeParam TContext - the type of the run context its calls get in {@link ToolContext.context}.
 */
export interface Toolset<TContext = unknown> {
  /** The tools the model is told about. */
  readonly tools: readonly Tool[];
  /** Handles one call. */
  handle(toolCall: ToolCall, context: ToolContext<TContext>): ToolResult | Promise<ToolResult>;
  /**
   * Whether a call must be approved before it runs. Optional: without it, no call needs approval.
   * `step` asks it before `handle`, as part of the call's own future (so the call keeps its place in
   * the results and an abort reclaims it like any running call); when it says `true`, the step's
   * approval handler decides (see `ApprovalDecision`). A throw or a rejection gives the model an
   * error result, and the call does not run. Wrap any toolset with `requireApproval` to add it.
   */
  needsApproval?(toolCall: ToolCall, context: ToolContext<TContext>): boolean | Promise<boolean>;
  /**
   * What may happen to this call if it was interrupted (its start recorded, its outcome not) and its
   * step is done again: see {@link ReplayPolicy}. Optional: without it, or for an answer that is no
   * policy, `'never'`. Synchronous: it is asked before the call starts and when a step is redone.
   */
  replayPolicy?(toolCall: ToolCall): ReplayPolicy;
}

/** Service identifier of {@link Toolset} in the kernel's container (global in the root, a tenant's in its child). */
export const Toolset: unique symbol = Symbol.for('kosong.Toolset');

/** A toolset with no tools: every call gets a "not found" result. */
export const emptyToolset: Toolset = {
  tools: [],
  handle: (toolCall) => ({ toolCallId: toolCall.id, returnValue: toolNotFound(toolCall.function.name) }),
};
