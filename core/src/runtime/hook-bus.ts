import { freezePart } from '../message/freeze.js';
import type { StreamedMessagePart } from '../message/parts.js';
import type { HookGuard } from './hook-guard.js';
import type {
  CleanupEvent,
  NamedStepHooks,
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

/**
 * Delivers the events of one step to its hooks, in registration order, through the step's
 * {@link HookGuard}. Blocking events are awaited one hook after the other; non-blocking ones are
 * started and tracked by the guard (so cleanup can wait for them). After {@link HookBus.close} nothing
 * more is delivered except the cleanup event.
 */
export class HookBus {
  private readonly partHooks: readonly HookBusEntry[];
  private closed = false;

  constructor(
    private readonly guard: HookGuard,
    private readonly entries: readonly HookBusEntry[],
    private readonly context: StepEventContext,
  ) {
    this.partHooks = entries.filter((entry) => typeof entry.hooks.onPart === 'function');
  }

  /** Whether any hook wants parts (when none does, the stream loop skips the bus entirely). */
  get wantsParts(): boolean {
    return this.partHooks.length > 0;
  }

  stepStart(fields: Omit<StepStartEvent, keyof StepEventContext>): Promise<void> | undefined {
    return this.deliverInOrder('onStepStart', this.entries, this.event(fields));
  }

  /** Awaited by the stream loop; `undefined` when every hook finished synchronously. */
  part(part: StreamedMessagePart): Promise<void> | undefined {
    if (this.closed) return undefined;
    return this.deliverInOrder('onPart', this.partHooks, this.event({ part: freezePart(part) }));
  }

  toolCall(fields: Omit<ToolCallEvent, keyof StepEventContext>): void {
    if (!this.closed) this.deliverDetached('onToolCall', this.event(fields));
  }

  toolResult(fields: Omit<ToolResultEvent, keyof StepEventContext>): void {
    if (!this.closed) this.deliverDetached('onToolResult', this.event(fields));
  }

  stepEnd(fields: Omit<StepEndEvent, keyof StepEventContext>): Promise<void> | undefined {
    return this.deliverInOrder('onStepEnd', this.entries, this.event(fields));
  }

  /** Waits for non-blocking hooks still running, then delivers the last event of the step. */
  async cleanup(fields: Omit<CleanupEvent, keyof StepEventContext>): Promise<void> {
    this.closed = true;
    await this.guard.drain();
    await this.deliverInOrder('onCleanup', this.entries, this.event(fields));
  }

  private event<F extends object>(fields: F): StepEventContext & F {
    return Object.freeze({ ...this.context, ...fields });
  }

  private deliverInOrder<H extends StepHookName>(
    hook: H,
    entries: readonly HookBusEntry[],
    event: EventOf<H>,
    from = 0,
  ): Promise<void> | undefined {
    for (let i = from; i < entries.length; i++) {
      const entry = entries[i]!;
      const fn = entry.hooks[hook] as ((event: EventOf<H>) => unknown) | undefined;
      if (typeof fn !== 'function') continue;
      const pending = this.guard.invoke(entry.name, entry.labels?.[hook] ?? hook, fn, entry.hooks, event);
      if (pending) return pending.then(() => this.deliverInOrder(hook, entries, event, i + 1));
    }
    return undefined;
  }

  private deliverDetached<H extends StepHookName>(hook: H, event: EventOf<H>): void {
    for (const entry of this.entries) {
      const fn = entry.hooks[hook] as ((event: EventOf<H>) => unknown) | undefined;
      if (typeof fn === 'function') this.guard.invoke(entry.name, entry.labels?.[hook] ?? hook, fn, entry.hooks, event);
    }
  }
}
