import type { Message } from '../../message/message.js';
import type { StreamedMessagePart, ToolCall } from '../../message/parts.js';
import type { FinishReason, ProviderSwitch } from '../../provider/chat-provider.js';
import type { GenerationOptions } from '../../provider/generation-options.js';
import type { OutputFormat } from '../../provider/output-format.js';
import type { TokenUsage } from '../../provider/token-usage.js';
import type { ApprovalDecision } from '../../tooling/approval.js';
import type { Tool } from '../../tooling/tool.js';
import type { ToolResult } from '../../tooling/tool-result.js';

/** Correlation ids every step event carries. */
export interface StepEventContext {
  /** Unique per step; the same in every event of one step. */
  readonly stepId: string;
  /** The tenant the step runs for, if any. */
  readonly tenant: string | undefined;
  /** The provider's name, e.g. `openai`. */
  readonly provider: string;
  /** The model's name. */
  readonly model: string;
  /**
   * The run's context value, as given to `step({ context })`, `runner.step({ context })` or
   * `agent.run(input, { context })` (`undefined` when none was). Opaque to the runtime: hooks may
   * read it (a user id for a log line, say); never change it.
   */
  readonly context?: unknown;
}

/** Before the provider is called. */
export interface StepStartEvent extends StepEventContext {
  /** The system prompt of the request. */
  readonly systemPrompt?: string;
  /** The tools the model is offered (the toolset's definitions). */
  readonly tools?: readonly Tool[];
  readonly history: readonly Message[];
  /**
   * The generation options the step asks for: the provider's own with the step's merged over them
   * (not yet checked: a bad value fails the step right after this event).
   */
  readonly generation: GenerationOptions;
  /** The structured output the step asks for (the JSON Schema sent to the provider), if any. */
  readonly output?: OutputFormat | undefined;
}

/**
 * One streamed part, as the provider sent it (before merging). The part is frozen (and what it holds:
 * a tool call's `function`, its `extras`): it never changes.
 *
 * Unlike the other events, this one (made once per part, on the hot path) is read-only through
 * accessors rather than frozen: its fields are getters of its class over private fields. Assigning
 * one throws a `TypeError` in strict code (ES modules, classes), and `delete` removes none, as on a
 * frozen object; but the event is extensible, so a hook can add a property of its own (which later
 * hooks see), and `Object.defineProperty` with the name of a field would give later hooks another
 * value under that name (the step and its message never read the event). Its fields are not own
 * properties: `Object.keys` and a spread (`{ ...event }`) see none; destructuring, `in` and
 * `JSON.stringify` (through `toJSON`) see all of them.
 */
export interface PartEvent extends StepEventContext {
  readonly part: StreamedMessagePart;
}

/**
 * A complete tool call was handed to the toolset (or withheld: then `executed` is `false`). The call
 * is frozen (its `function` and `extras` too): it is the very object the toolset runs next.
 */
export interface ToolCallEvent extends StepEventContext {
  readonly toolCall: ToolCall;
  readonly toolCallId: string;
  /** Position of the call in the step's `toolCalls`. */
  readonly index: number;
  /** `false` when the runtime did not run the call (see the dispatch modes of `step`). */
  readonly executed: boolean;
}

/** A tool call needs approval: the step's approval handler is asked now (or, without one, it is deferred). */
export interface ApprovalRequestEvent extends StepEventContext {
  readonly toolCall: ToolCall;
  readonly toolCallId: string;
  readonly index: number;
  /** `true` when the call was interrupted before (it may have run) and approving runs it again (see `ApprovalRequest.replay`). */
  readonly replay?: true;
}

/**
 * The decision about a call that needed approval: the handler's, one given to `agent.resume`, or a
 * denial because the handler failed, gave something that is no decision, or timed out (`reason`
 * says which). Not sent when the step aborts while the call waits.
 */
export interface ApprovalDecisionEvent extends StepEventContext {
  readonly toolCall: ToolCall;
  readonly toolCallId: string;
  readonly index: number;
  readonly decision: ApprovalDecision;
}

/** A tool call settled. Delivered in completion order. */
export interface ToolResultEvent extends StepEventContext {
  readonly toolCall: ToolCall;
  readonly toolCallId: string;
  readonly index: number;
  readonly result: ToolResult;
  /** Time from dispatch to settlement. */
  readonly durationMs: number;
}

/** The message is complete (`error` undefined), or the step failed (`error` set). */
export interface StepEndEvent extends StepEventContext {
  readonly message: Message | undefined;
  /** The provider's id of the message. */
  readonly messageId: string | undefined;
  readonly usage: TokenUsage | undefined;
  readonly finishReason: FinishReason | undefined;
  readonly toolCalls: readonly ToolCall[];
  /** Why the step failed: a provider error, the abort reason, or anything else that was thrown. */
  readonly error: unknown;
  /**
   * Whether the step failed because it was aborted: its signal aborted, or its `stepMs` / `idleMs`
   * timeout budget ran out (then `error` is the abort reason: for a budget, a `TimeoutBudgetError`).
   */
  readonly aborted: boolean;
  readonly durationMs: number;
}

/** Every tool of the step has settled or been given up on. Always the last event of a step. */
export interface CleanupEvent extends StepEventContext {
  /** Tool calls that were still running past the cleanup deadline after being aborted. */
  readonly leaked: readonly ToolCall[];
  /** Whether running tools had to be aborted (the step failed, was aborted, or was cancelled). */
  readonly cancelled: boolean;
}

/**
 * The agent loop will try a failed step again. Only the agent loop (`kernel.agent()`) sends this;
 * `stepId` is the id of the attempt that failed (its `onStepEnd` carried the error).
 */
export interface RetryEvent extends StepEventContext {
  /** The step of the turn (from 1). */
  readonly step: number;
  readonly attempt: number;
  readonly nextAttempt: number;
  /** How long the loop waits before the next attempt. */
  readonly delayMs: number;
  readonly error: unknown;
}

/**
 * The step's provider moved the request to another model before the first part of the response
 * arrived (a fallback provider passing over a model that failed). `provider` and `model` are the
 * step's own (the fallback's); `from` and `to` the models of the chain.
 */
export interface ProviderSwitchEvent extends StepEventContext, ProviderSwitch {}

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

/**
 * Observers of a step. Every method is optional, receives one read-only event (frozen, but for the
 * per-part one: see {@link PartEvent}), and is guarded: a throw,
 * a rejection or a timeout is reported to the hook-error handler and never changes the step.
 * Hooks of several owners run in registration order.
 */
export interface StepHooks {
  /** Before the provider is called. Awaited. */
  onStepStart?(event: StepStartEvent): void | Promise<void>;
  /** Each streamed part. Awaited in order (back-pressure on the stream), with a timeout. */
  onPart?(event: PartEvent): void | Promise<void>;
  /** A complete tool call was dispatched. Does not block the stream. */
  onToolCall?(event: ToolCallEvent): void | Promise<void>;
  /** A tool call settled (completion order). Does not block the stream. */
  onToolResult?(event: ToolResultEvent): void | Promise<void>;
  /** A tool call needs approval; its decision is asked for. Does not block anything. */
  onApprovalRequest?(event: ApprovalRequestEvent): void | Promise<void>;
  /** A call that needed approval was approved, denied or deferred. Does not block anything. */
  onApprovalDecision?(event: ApprovalDecisionEvent): void | Promise<void>;
  /** The message is complete, or the step failed. Exactly once per step. Awaited. */
  onStepEnd?(event: StepEndEvent): void | Promise<void>;
  /** After every tool is reclaimed. Exactly once per step, always last. Awaited. */
  onCleanup?(event: CleanupEvent): void | Promise<void>;
  /** The agent loop will retry a failed step (sent by `kernel.agent()` only, after that step's cleanup). Not awaited. */
  onRetry?(event: RetryEvent): void | Promise<void>;
  /** The provider moved the request to another model before its first part (see {@link ProviderSwitchEvent}). Not awaited. */
  onProviderSwitch?(event: ProviderSwitchEvent): void | Promise<void>;
  /**
   * Runs a piece of work — a step's provider call, one tool call, one agent turn (see
   * {@link ContextScope}) — inside a context of the hook's: call `run()` once, synchronously, and
   * return what it returns. What `run` starts keeps that context (e.g. OpenTelemetry's
   * `context.with(ctx, run)` makes a span active for the request's HTTP call, or for what a tool
   * does). It cannot change the work: the runtime uses `run`'s own result whatever this returns.
   *
   * Guarded: if it throws, returns before calling `run`, or calls it twice, the failure is reported
   * and the work runs once all the same (outside the context when `run` was not called). Hooks of
   * several owners nest in registration order (the first is outermost). Without any, nothing is wrapped.
   */
  runInContext?<T>(scope: ContextScope, run: () => T): T;
}

/** Service identifier of {@link StepHooks} in the kernel's container (multi-bound, one per hook plugin). */
export const StepHooks: unique symbol = Symbol.for('kosong.StepHooks');

/** Hooks with the name of their owner (a plugin), used in hook-error reports. */
export interface NamedStepHooks {
  readonly name: string;
  readonly hooks: StepHooks;
}

/** The names of the {@link StepHooks} methods. */
export type StepHookName = keyof StepHooks;

/** Gives hooks passed without a name the name `fallbackName` (used in hook-error reports). */
export function asNamedHooks(hooks: StepHooks | NamedStepHooks, fallbackName: string): NamedStepHooks {
  const named = hooks as Partial<NamedStepHooks>;
  return typeof named.name === 'string' && typeof named.hooks === 'object' && named.hooks !== null
    ? (hooks as NamedStepHooks)
    : { name: fallbackName, hooks: hooks as StepHooks };
}
