import { freezePart } from '../message/freeze.js';
import type { StreamedMessagePart } from '../message/parts.js';
import { hookSlot, type HookGuard, type HookSlot } from './hook-guard.js';
import type {
  ApprovalDecisionEvent,
  ApprovalRequestEvent,
  CleanupEvent,
  NamedStepHooks,
  PartEvent,
  RetryEvent,
  StepEndEvent,
  StepEventContext,
  StepHookName,
  StepHooks,
  StepStartEvent,
  ToolCallEvent,
  ToolResultEvent,
} from './step-hooks.js';

/** Hooks of one owner, with optional labels for reports (e.g. `onMessagePart` for the `onPart` slot). */
export interface HookBusEntry extends NamedStepHooks {
  readonly labels?: Partial<Record<StepHookName, string>>;
}

type EventOf<H extends StepHookName> = Parameters<NonNullable<StepHooks[H]>>[0];
type Slots = { readonly [H in StepHookName]: readonly HookSlot<EventOf<H>>[] };

const HOOK_NAMES: readonly StepHookName[] = [
  'onStepStart',
  'onPart',
  'onToolCall',
  'onToolResult',
  'onApprovalRequest',
  'onApprovalDecision',
  'onStepEnd',
  'onCleanup',
  'onRetry',
];

/**
 * Delivers the events of one step to its hooks, in registration order, through the step's
 * {@link HookGuard}. Blocking events are awaited one hook after the other; non-blocking ones are
 * started and tracked by the guard (so cleanup can wait for them). After the cleanup event starts,
 * nothing else is delivered.
 */
export class HookBus {
  private readonly slots: Slots;
  private closed = false;

  constructor(
    private readonly guard: HookGuard,
    entries: readonly HookBusEntry[],
    private readonly context: StepEventContext,
  ) {
    const slots: Record<string, HookSlot<never>[]> = {};
    for (const hook of HOOK_NAMES) {
      slots[hook] = [];
      for (const entry of entries) {
        const fn = entry.hooks[hook] as ((event: never) => unknown) | undefined;
        if (typeof fn === 'function') slots[hook].push(hookSlot(entry.name, entry.labels?.[hook] ?? hook, fn, entry.hooks));
      }
    }
    this.slots = slots as unknown as Slots;
  }

  /** Whether any hook wants parts (when none does, the stream loop skips the bus entirely). */
  get wantsParts(): boolean {
    return this.slots.onPart.length > 0;
  }

  stepStart(fields: Omit<StepStartEvent, keyof StepEventContext>): Promise<void> | undefined {
    return this.inOrder(this.slots.onStepStart, this.event(fields));
  }

  /** Awaited by the stream loop; `undefined` when every hook finished synchronously. */
  part(part: StreamedMessagePart): Promise<void> | undefined {
    if (this.closed) return undefined;
    // The hot path, once per part: a literal (a spread costs 10x), and the part frozen (hooks cannot
    // change what is merged) but not the event itself (freezing it would double the cost per part).
    const { stepId, tenant, provider, model, context } = this.context;
    const event: PartEvent = { stepId, tenant, provider, model, context, part: freezePart(part) };
    const slots = this.slots.onPart;
    const guard = this.guard;
    for (let i = 0; i < slots.length; i++) {
      const pending = guard.invoke(slots[i]!, event);
      if (pending !== undefined) return pending.then(() => this.inOrder(slots, event, i + 1));
    }
    return undefined;
  }

  toolCall(fields: Omit<ToolCallEvent, keyof StepEventContext>): void {
    if (!this.closed && this.slots.onToolCall.length > 0) this.detached(this.slots.onToolCall, this.event(fields));
  }

  toolResult(fields: Omit<ToolResultEvent, keyof StepEventContext>): void {
    if (!this.closed && this.slots.onToolResult.length > 0) this.detached(this.slots.onToolResult, this.event(fields));
  }

  approvalRequest(fields: Omit<ApprovalRequestEvent, keyof StepEventContext>): void {
    if (!this.closed && this.slots.onApprovalRequest.length > 0) this.detached(this.slots.onApprovalRequest, this.event(fields));
  }

  approvalDecision(fields: Omit<ApprovalDecisionEvent, keyof StepEventContext>): void {
    if (!this.closed && this.slots.onApprovalDecision.length > 0) this.detached(this.slots.onApprovalDecision, this.event(fields));
  }

  /** Delivers a retry notice (the agent loop's; steps themselves never send it). Not awaited. */
  retry(fields: Omit<RetryEvent, keyof StepEventContext>): void {
    if (this.slots.onRetry.length > 0) this.detached(this.slots.onRetry, this.event(fields));
  }

  stepEnd(fields: Omit<StepEndEvent, keyof StepEventContext>): Promise<void> | undefined {
    return this.inOrder(this.slots.onStepEnd, this.event(fields));
  }

  /** Waits for non-blocking hooks still running, then delivers the last event of the step. */
  async cleanup(fields: Omit<CleanupEvent, keyof StepEventContext>): Promise<void> {
    this.closed = true;
    await this.guard.drain();
    await this.inOrder(this.slots.onCleanup, this.event(fields));
  }

  private event<F extends object>(fields: F): StepEventContext & F {
    return Object.freeze({ ...this.context, ...fields });
  }

  private inOrder<E>(slots: readonly HookSlot<E>[], event: E, from = 0): Promise<void> | undefined {
    for (let i = from; i < slots.length; i++) {
      const pending = this.guard.invoke(slots[i]!, event);
      if (pending) return pending.then(() => this.inOrder(slots, event, i + 1));
    }
    return undefined;
  }

  private detached<E>(slots: readonly HookSlot<E>[], event: E): void {
    for (const slot of slots) this.guard.invoke(slot, event);
  }
}
