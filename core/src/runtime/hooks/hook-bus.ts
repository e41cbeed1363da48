import { freezePart } from '../../message/freeze.js';
import { freezeMessage, freezeToolResult } from './freeze-payload.js';
import type { Message } from '../../message/message.js';
import type { StreamedMessagePart, ToolCall } from '../../message/parts.js';
import type { FinishReason, ProviderSwitch } from '../../provider/chat-provider.js';
import { mergeGenerationOptions, type GenerationOptions } from '../../provider/generation-options.js';
import type { OutputFormat } from '../../provider/output-format.js';
import type { TokenUsage } from '../../provider/token-usage.js';
import type { Tool } from '../../tooling/tool.js';
import type { ToolResult } from '../../tooling/tool-result.js';
import type { HookGuard, HookSlot } from './hook-guard.js';
import { HookTable, type HookBusEntry, type HookSlots } from './hook-table.js';
import { ReadOnlyPartEvent } from './read-only-part-event.js';
import type {
  ApprovalDecisionEvent,
  ApprovalRequestEvent,
  CleanupEvent,
  RetryEvent,
  StepEndEvent,
  StepEventContext,
  StepHookName,
  StepStartEvent,
  ToolCallEvent,
  ToolResultEvent,
} from './step-hooks.js';

export type { HookBusEntry } from './hook-table.js';

/** What a step asks of its provider, for its `onStepStart` event. */
export interface StepRequest {
  readonly systemPrompt: string;
  readonly tools: readonly Tool[];
  readonly history: readonly Message[];
  /** The provider's own generation options. */
  readonly providerGeneration: GenerationOptions;
  /** The step's generation options, merged over the provider's. */
  readonly stepGeneration: GenerationOptions | undefined;
  /** The structured output asked for, if any. */
  readonly output: OutputFormat | undefined;
}

/** How a step ended, for its `onStepEnd` event. */
export interface StepEnding {
  readonly message: Message | undefined;
  readonly messageId: string | undefined;
  readonly usage: TokenUsage | undefined;
  readonly finishReason: FinishReason | undefined;
  readonly error: unknown;
  readonly aborted: boolean;
}

/**
 * Delivers the events of one step to its hooks, in registration order, through the step's
 * {@link HookGuard}. Blocking events are awaited one hook after the other; non-blocking ones are
 * started and tracked by the guard (so cleanup can wait for them). After the cleanup event starts,
 * nothing else is delivered.
 *
 * An event is built only when a hook listens for it. Hook payloads are read-only: a hook can
 * change nothing another hook or the step sees. Every event but the per-part one is a frozen object
 * literal (a spread, `{ ...context, ...fields }`, would cost up to 80 times more on Node 20). The
 * per-part event, made once per streamed part, is a {@link ReadOnlyPartEvent}: read-only accessors
 * over private fields, around the frozen part (freezing the event literal as well cost ~50 ns a part).
 *
 * Which hooks an owner has is read from a {@link HookTable}: built per step from `entries`, or, for
 * the entries a kernel runner gives (`HookTable.join`), built once per scope.
 */
export class HookBus {
  private readonly slots: HookSlots;
  private closed = false;

  private readonly guard: HookGuard;

  /** `guard` may be left out when there are no `entries` (a step without hooks needs none). */
  constructor(
    guard: HookGuard | undefined,
    entries: readonly HookBusEntry[],
    private readonly context: StepEventContext,
  ) {
    if (entries.length > 0 && guard === undefined) throw new TypeError('HookBus: hooks need a guard');
    this.slots = HookTable.of(entries).slots;
    this.guard = guard as HookGuard;
  }

  /** Whether any hook wants parts (when none does, the stream loop skips the bus entirely). */
  get wantsParts(): boolean {
    return this.slots.onPart.length > 0;
  }

  /** Whether any hook listens for `hook` (so that the caller can skip preparing its event). */
  listens(hook: StepHookName): boolean {
    return this.slots[hook].length > 0;
  }

  /**
   * Before the provider is called; the event's `generation` is the provider's own options with the
   * step's merged over them (merged only when someone listens).
   */
  stepStart(request: StepRequest): Promise<void> | undefined {
    const slots = this.slots.onStepStart;
    if (slots.length === 0) return undefined;
    const { stepId, tenant, provider, model, context } = this.context;
    const { systemPrompt, tools, history, output } = request;
    const generation = mergeGenerationOptions(request.providerGeneration, request.stepGeneration);
    const event: StepStartEvent = Object.freeze({ stepId, tenant, provider, model, context, systemPrompt, tools, history, generation, output });
    return this.inOrder(slots, event, 0);
  }

  /** Awaited by the stream loop; `undefined` when every hook finished synchronously. */
  part(part: StreamedMessagePart): Promise<void> | undefined {
    if (this.closed) return undefined;
    // The hot path, once per part: an event read through accessors (not frozen: see ReadOnlyPartEvent), around the frozen part.
    const event = new ReadOnlyPartEvent(this.context, freezePart(part));
    const slots = this.slots.onPart;
    const guard = this.guard;
    for (let i = 0; i < slots.length; i++) {
      const pending = guard.invoke(slots[i]!, event);
      if (pending !== undefined) return pending.then(() => this.inOrder(slots, event, i + 1));
    }
    return undefined;
  }

  /** A complete tool call was dispatched (or withheld: `executed` false). Not awaited. */
  toolCall(toolCall: ToolCall, index: number, executed: boolean): void {
    const slots = this.slots.onToolCall;
    if (this.closed || slots.length === 0) return;
    const { stepId, tenant, provider, model, context } = this.context;
    // The call frozen (its arguments too) before any hook sees it: the toolset runs this very object next.
    freezePart(toolCall);
    const event: ToolCallEvent = Object.freeze({ stepId, tenant, provider, model, context, toolCall, toolCallId: toolCall.id, index, executed });
    this.detached(slots, event);
  }

  /** A tool call settled. Not awaited. */
  toolResult(toolCall: ToolCall, index: number, result: ToolResult, durationMs: number): void {
    const slots = this.slots.onToolResult;
    if (this.closed || slots.length === 0) return;
    const { stepId, tenant, provider, model, context } = this.context;
    freezePart(toolCall); // the message's own call
    freezeToolResult(result); // what toolResults() returns
    const event: ToolResultEvent = Object.freeze({ stepId, tenant, provider, model, context, toolCall, toolCallId: toolCall.id, index, result, durationMs });
    this.detached(slots, event);
  }

  /** A call needs approval; its decision is asked for. Not awaited. */
  approvalRequest(fields: Omit<ApprovalRequestEvent, keyof StepEventContext>): void {
    const slots = this.slots.onApprovalRequest;
    if (this.closed || slots.length === 0) return;
    const { stepId, tenant, provider, model, context } = this.context;
    const { toolCall, toolCallId, index, replay } = fields;
    const event: ApprovalRequestEvent = Object.freeze(
      replay === true ? { stepId, tenant, provider, model, context, toolCall, toolCallId, index, replay } : { stepId, tenant, provider, model, context, toolCall, toolCallId, index },
    );
    this.detached(slots, event);
  }

  /** A call that needed approval was approved, denied or deferred. Not awaited. */
  approvalDecision(fields: Omit<ApprovalDecisionEvent, keyof StepEventContext>): void {
    const slots = this.slots.onApprovalDecision;
    if (this.closed || slots.length === 0) return;
    const { stepId, tenant, provider, model, context } = this.context;
    const { toolCall, toolCallId, index, decision } = fields;
    const event: ApprovalDecisionEvent = Object.freeze({ stepId, tenant, provider, model, context, toolCall, toolCallId, index, decision });
    this.detached(slots, event);
  }

  /** Delivers a retry notice (the agent loop's; steps themselves never send it). Not awaited. */
  retry(fields: Omit<RetryEvent, keyof StepEventContext>): void {
    const slots = this.slots.onRetry;
    if (slots.length === 0) return;
    const { stepId, tenant, provider, model, context } = this.context;
    const { step, attempt, nextAttempt, delayMs, error } = fields;
    this.detached(slots, Object.freeze({ stepId, tenant, provider, model, context, step, attempt, nextAttempt, delayMs, error }));
  }

  /** The provider moved the request to another model (see `ProviderGenerateOptions.onProviderSwitch`). Not awaited. */
  providerSwitch(change: ProviderSwitch): void {
    const slots = this.slots.onProviderSwitch;
    if (this.closed || slots.length === 0) return;
    const { stepId, tenant, provider, model, context } = this.context;
    const from = Object.freeze({ provider: String(change.from.provider), model: String(change.from.model) });
    const to = Object.freeze({ provider: String(change.to.provider), model: String(change.to.model) });
    this.detached(slots, Object.freeze({ stepId, tenant, provider, model, context, from, to, reason: String(change.reason), error: change.error }));
  }

  /** The message is complete, or the step failed. `toolCalls` is copied into the event. */
  stepEnd(ending: StepEnding, toolCalls: readonly ToolCall[], durationMs: number): Promise<void> | undefined {
    const slots = this.slots.onStepEnd;
    if (slots.length === 0) return undefined;
    const { stepId, tenant, provider, model, context } = this.context;
    const { message, messageId, usage, finishReason, error, aborted } = ending;
    // What the step returns (its message and usage) frozen before any hook sees it.
    if (message !== undefined) freezeMessage(message);
    if (usage !== undefined) Object.freeze(usage);
    const event: StepEndEvent = Object.freeze({
      stepId,
      tenant,
      provider,
      model,
      context,
      message,
      messageId,
      usage,
      finishReason,
      toolCalls: Object.freeze(toolCalls.slice()),
      error,
      aborted,
      durationMs,
    });
    return this.inOrder(slots, event, 0);
  }

  /**
   * Waits for non-blocking hooks still running, then delivers the last event of the step.
   * `undefined` when there was nothing to wait for and every hook finished synchronously.
   */
  cleanup(leaked: readonly ToolCall[], cancelled: boolean): Promise<void> | undefined {
    if (this.slots === HookTable.EMPTY.slots) return undefined; // nothing was delivered, nothing is to come (and the bus may be shared)
    this.closed = true;
    const draining = this.guard.drain();
    return draining === undefined ? this.deliverCleanup(leaked, cancelled) : draining.then(() => this.deliverCleanup(leaked, cancelled));
  }

  private deliverCleanup(leaked: readonly ToolCall[], cancelled: boolean): Promise<void> | undefined {
    const slots = this.slots.onCleanup;
    if (slots.length === 0) return undefined;
    const { stepId, tenant, provider, model, context } = this.context;
    const event: CleanupEvent = Object.freeze({ stepId, tenant, provider, model, context, leaked: Object.freeze(leaked), cancelled });
    return this.inOrder(slots, event, 0);
  }

  private inOrder<E>(slots: readonly HookSlot<E>[], event: E, from: number): Promise<void> | undefined {
    for (let i = from; i < slots.length; i++) {
      const pending = this.guard.invoke(slots[i]!, event);
      if (pending) return pending.then(() => this.inOrder(slots, event, i + 1));
    }
    return undefined;
  }

  private detached<E>(slots: readonly HookSlot<E>[], event: E): void {
    for (let i = 0; i < slots.length; i++) this.guard.invoke(slots[i]!, event);
  }
}
