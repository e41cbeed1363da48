import type { ToolCall } from '../message/parts.js';
import type { StepEventContext } from './step-hooks.js';

/**
 * A piece of work the runtime runs inside the hooks' {@link StepHooks.runInContext}: the provider
 * call of a step, one tool call, or one agent turn. A telemetry plugin makes its span the active
 * context there, so that what the work does (an instrumented HTTP request, a database call) nests
 * under it.
 */
export type ContextScope = RequestScope | ToolScope | TurnScope;

/**
 * The provider call of a step: the request, the response stream and everything done while it
 * streams (parts delivered to hooks, tool calls dispatched; each tool call then runs in its own
 * {@link ToolScope} inside it).
 */
export interface RequestScope extends StepEventContext {
  readonly kind: 'request';
}

/** One tool call: the toolset's `handle`, and the work it starts. */
export interface ToolScope extends StepEventContext {
  readonly kind: 'tool';
  readonly toolCall: ToolCall;
  readonly toolCallId: string;
  /** Position of the call in the step's tool calls. */
  readonly index: number;
}

/** One agent turn (`agent.run` or `agent.resume`): every step of it, retries and waits included. */
export interface TurnScope {
  readonly kind: 'turn';
  /** Unique per turn. */
  readonly turnId: string;
  /** The agent's name, if it was given one (`AgentOptions.name`). */
  readonly agent: string | undefined;
  /** The tenant the turn runs for, if known (`kernel.agent()` knows it). */
  readonly tenant: string | undefined;
  /** The provider's name and model, if known when the turn starts (`kernel.agent()` resolves them). */
  readonly provider: string | undefined;
  readonly model: string | undefined;
  /** The run's context value (see `StepEventContext.context`). */
  readonly context?: unknown;
}
