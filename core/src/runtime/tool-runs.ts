import { setMaxListeners } from 'node:events';
import type { ToolCall } from '../message/parts.js';
import { describeError, toolAwaitingApproval, toolInvalidReturn, toolNotExecuted, toolRuntimeError } from '../tooling/tool-errors.js';
import { isToolResult, isToolReturnValue, type ToolResult, type ToolReturnValue } from '../tooling/tool-result.js';
import type { ToolContext, Toolset } from '../tooling/toolset.js';
import type { ApprovalGate, GateEntry, GateOutcome } from './approval-gate.js';
import { isThenable } from './hook-guard.js';

/** Called once per call when its result is known, in completion order. */
export type ToolSettledListener = (index: number, call: ToolCall, result: ToolResult, durationMs: number) => void;

/** What every call of a step gets besides its own: the run's context, and the hooks' context wrapper. */
export interface ToolRunSettings {
  /** The run's context value (`ToolContext.context`). */
  readonly context: unknown;
  /** Runs the toolset's `handle` of a call inside the hooks' contexts (none: called as it is). */
  readonly inScope: (<T>(call: ToolCall, index: number, run: () => T) => T) | undefined;
}

const NO_SETTINGS: ToolRunSettings = { context: undefined, inScope: undefined };

/**
 * The tool work of one step: one future per call, whatever `Toolset.handle` did (returned a result,
 * returned a promise, threw, or rejected), kept in call order so duplicate call ids cannot collide.
 * A future never rejects. All calls share one abort signal, aborted by {@link ToolRuns.cancel}.
 */
export class ToolRuns {
  /** The calls, in the order they were made. */
  readonly calls: ToolCall[] = [];
  private readonly futures: Promise<ToolResult>[] = [];
  private readonly results: (ToolResult | undefined)[] = [];
  private readonly completionOrder: ToolResult[] = [];
  private readonly controller = new AbortController();
  private pending = 0;
  private waiters: (() => void)[] = [];
  private cancelReason: { readonly reason: unknown } | undefined;

  constructor(
    private readonly toolset: Toolset,
    private readonly stepId: string,
    private readonly onSettled: ToolSettledListener,
    /** Asks for approval where a call needs it (none: no call can). */
    private readonly gate?: ApprovalGate,
    private readonly settings: ToolRunSettings = NO_SETTINGS,
  ) {
    // Every call of the step listens to this one signal: many parallel calls are normal, not a leak.
    setMaxListeners(0, this.controller.signal);
  }

  /**
   * Hands a call to the toolset — after its approval, where it needs one: waiting for the decision
   * is part of the call's own future (its place in the results, its abort and its cleanup are a
   * running call's). `entry` says how the call comes to the gate (default: the toolset is asked).
   */
  dispatch(call: ToolCall, entry?: GateEntry): number {
    const index = this.calls.push(call) - 1;
    const startedAt = performance.now();
    const context: ToolContext = { signal: this.controller.signal, toolCall: call, stepId: this.stepId, index, context: this.settings.context };
    const gate = this.gate;
    const future =
      gate === undefined
        ? this.handle(call, context)
        : gate.pass(call, context, entry ?? CHECK).then((outcome) => this.afterGate(call, context, outcome));
    this.track(index, call, future, startedAt);
    return index;
  }

  /** Records a call whose result is known already (a resumed step's call that ran before); no listener hears of it. */
  adopt(call: ToolCall, result: ToolResult): number {
    const index = this.calls.push(call) - 1;
    this.track(index, call, Promise.resolve(normalise(call, result)), performance.now(), false);
    return index;
  }

  /** Records a call the runtime will not run, with the error result the model gets instead. */
  skip(call: ToolCall, returnValue: ToolReturnValue): number {
    const index = this.calls.push(call) - 1;
    this.track(index, call, Promise.resolve({ toolCallId: call.id, returnValue }), performance.now());
    return index;
  }

  /** How many calls have not settled yet. */
  get running(): number {
    return this.pending;
  }

  /** Whether {@link ToolRuns.cancel} was called (calls dispatched now would start aborted). */
  get cancelled(): boolean {
    return this.controller.signal.aborted;
  }

  /** The reason given to {@link ToolRuns.cancel} while calls were running, if that happened. */
  get cancellation(): { readonly reason: unknown } | undefined {
    return this.cancelReason;
  }

  /** Results so far, in completion order. */
  get resultsInCompletionOrder(): readonly ToolResult[] {
    return this.completionOrder;
  }

  /** Every result in call order, once all calls have settled. */
  all(): Promise<ToolResult[]> {
    return Promise.all(this.futures);
  }

  /** Resolves on the next settlement or cancellation (or at once if nothing is running). */
  changed(): Promise<void> {
    if (this.pending === 0 || this.cancelReason) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Aborts every running call through its signal. The first reason wins. */
  cancel(reason: unknown): void {
    if (this.controller.signal.aborted) return;
    if (this.pending > 0) this.cancelReason = { reason };
    this.controller.abort(reason);
    this.wake();
  }

  /**
   * Cancels what still runs, then waits for it to settle, at most `deadlineMs`.
   *
   * @returns the calls still running at the deadline (leaked: they ignored their abort signal).
   */
  async reclaim(reason: unknown, deadlineMs: number): Promise<ToolCall[]> {
    if (this.pending === 0) return [];
    this.cancel(reason);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, deadlineMs);
    });
    await Promise.race([Promise.all(this.futures), deadline]);
    clearTimeout(timer);
    return this.calls.filter((_, index) => this.results[index] === undefined);
  }

  /** The toolset's result of a call, whatever `handle` did; never rejects. */
  private handle(call: ToolCall, context: ToolContext): Promise<ToolResult> {
    try {
      const inScope = this.settings.inScope;
      const returned = inScope ? inScope(call, context.index ?? 0, () => this.toolset.handle(call, context)) : this.toolset.handle(call, context);
      // normalise never throws: a result whose getters throw becomes an error result, on both paths.
      return isThenable(returned)
        ? Promise.resolve(returned).then(
            (value) => normalise(call, value),
            (error: unknown) => threw(call, error),
          )
        : Promise.resolve(normalise(call, returned));
    } catch (error) {
      return Promise.resolve(threw(call, error));
    }
  }

  private afterGate(call: ToolCall, context: ToolContext, outcome: GateOutcome): ToolResult | Promise<ToolResult> {
    switch (outcome.type) {
      case 'run':
        // Approved, but the step may have been cancelled since: then the call does not start.
        return context.signal.aborted ? { toolCallId: call.id, returnValue: toolNotExecuted('the step was cancelled') } : this.handle(call, context);
      case 'deferred':
        return { toolCallId: call.id, returnValue: toolAwaitingApproval(), deferred: true };
      default:
        return { toolCallId: call.id, returnValue: outcome.returnValue };
    }
  }

  private track(index: number, call: ToolCall, future: Promise<ToolResult>, startedAt: number, heard = true): void {
    this.pending++;
    this.futures.push(
      future.then((result) => {
        this.results[index] = result;
        this.completionOrder.push(result);
        this.pending--;
        if (heard) {
          try {
            this.onSettled(index, call, result, performance.now() - startedAt);
          } catch {
            // the listener delivers to guarded hooks; a future must never reject
          }
        }
        this.wake();
        return result;
      }),
    );
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }
}

const CHECK: GateEntry = Object.freeze({ type: 'check' });

/**
 * The result of `call` from what the toolset gave, as plain data read once. Never throws: reading a
 * result can run code (a getter, a proxy trap), and a throw there becomes an error result like any
 * other tool failure; later readers (hooks, the agent, serialisation) see plain values only.
 */
function normalise(call: ToolCall, value: unknown): ToolResult {
  try {
    if (!isToolResult(value)) return { toolCallId: call.id, returnValue: toolInvalidReturn(describeValue(value)) };
    const { isError, output, message, display, extras } = value.returnValue;
    const returnValue: ToolReturnValue = extras === undefined ? { isError, output, message, display } : { isError, output, message, display, extras };
    if (!isToolReturnValue(returnValue)) return { toolCallId: call.id, returnValue: toolInvalidReturn(describeValue(value)) };
    return { toolCallId: call.id, returnValue };
  } catch (error) {
    return threw(call, error);
  }
}

function threw(call: ToolCall, error: unknown): ToolResult {
  return { toolCallId: call.id, returnValue: toolRuntimeError(describeError(error)) };
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value === 'object' ? `object without toolCallId/returnValue` : typeof value;
}
