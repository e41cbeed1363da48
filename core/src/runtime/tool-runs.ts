import { setMaxListeners } from 'node:events';
import type { ContentPart, ToolCall } from '../message/parts.js';
import { replayPolicyOf } from '../tooling/replay-policy.js';
import { describeError, toolAwaitingApproval, toolInvalidReturn, toolNotExecuted, toolNotRecorded, toolRuntimeError, toolTimedOut } from '../tooling/tool-errors.js';
import { isToolResult, isToolReturnValue, type ToolResult, type ToolReturnValue } from '../tooling/tool-result.js';
import type { ToolContext, Toolset } from '../tooling/toolset.js';
import type { ApprovalGate, GateEntry, GateOutcome } from './approval-gate.js';
import { append } from './append.js';
import { isThenable } from './hooks/hook-guard.js';
import type { StepLedger } from './step-ledger.js';
import { TimeoutBudgetError, type StepDeadline } from './timeout-budgets.js';

/** Hears of each call's result when it is known, in completion order. */
export interface ToolRunListener {
  /** Called once per call (not for results adopted from before), as a method of the listener. */
  toolSettled(index: number, call: ToolCall, result: ToolResult, durationMs: number): void;
}

/** What every call of a step gets besides its own: the run's context, and the hooks' context wrapper. */
export interface ToolRunSettings {
  /** The run's context value (`ToolContext.context`). */
  readonly context: unknown;
  /** Runs the toolset's `handle` of a call inside the hooks' contexts (none: called as it is). */
  readonly inScope: (<T>(call: ToolCall, index: number, run: () => T) => T) | undefined;
  /** Where the calls' starts and outcomes are recorded (none: nowhere). */
  readonly ledger?: StepLedger | undefined;
  /** The message's content so far, for the ledger's start records. */
  readonly content?: (() => readonly ContentPart[]) | undefined;
  /** The calls' time budgets (`timeouts.toolCallMs`; none: no limit). */
  readonly callBudgets?: CallBudgets | undefined;
  /**
   * The step's own budgets (`stepMs`, `idleMs`), kept here for the step (not by the tool runs),
   * so that a step without budgets has no field for them.
   */
  readonly deadline?: StepDeadline | undefined;
}

/**
 * The time budgets of a step's calls (`timeouts.toolCallMs`): the budget of each call, by index,
 * and the calls given up as leaked after their budget ran out.
 */
export class CallBudgets {
  /** By index: each call's budget. */
  readonly byIndex: (CallBudget | undefined)[] = [];
  /** Calls whose budget ran out and that ignored their signal past the cleanup deadline. */
  leaked: ToolCall[] | undefined;

  constructor(
    /** Each call's budget, in ms. */
    readonly limitMs: number,
    /** How long a call whose budget ran out gets to stop before it is given up as leaked (`cleanupTimeoutMs`). */
    readonly graceMs: number,
  ) {}
}

/** The settings of a step that needs none: every field present, in the order a step's own settings have them (one shape for both). */
const NO_SETTINGS: ToolRunSettings = { context: undefined, inScope: undefined, ledger: undefined, content: undefined, callBudgets: undefined, deadline: undefined };

const NO_CONTENT: readonly ContentPart[] = Object.freeze([]);

/**
 * Steps dispatching more calls than this raise the listener limit of their shared abort signal (one
 * listener per call is normal, not a leak; the default limit warns past 10).
 */
const MANY_CALLS = 4;

const NONE: readonly never[] = Object.freeze([]);

/**
 * The tool work of one step: one result per call, whatever `Toolset.handle` did (returned a result,
 * returned a promise, threw, or rejected), kept in call order so duplicate call ids cannot collide.
 * A call never fails: a throw or a rejection becomes an error result. All calls share one abort
 * signal, aborted by {@link ToolRuns.cancel}.
 *
 * Kept small, since thousands of steps may be in flight at once: the abort controller is created when
 * a call first reads `ToolContext.signal` (already aborted if the step was cancelled by then; a step
 * whose tools never read it has none), and nothing but its result is kept of a call once it settled.
 */
export class ToolRuns {
  private callList: ToolCall[] | undefined;
  /** The result of each call, by index, once it settled. */
  private results: (ToolResult | undefined)[] | undefined;
  /**
   * The results in completion order, made when a call first settles before an earlier one: until
   * then (most steps: one call, or calls that settle in turn) the settled calls are the first ones,
   * and `results` is that order.
   */
  private completionOrder: ToolResult[] | undefined;
  private controller: AbortController | undefined;
  private pending = 0;
  /** Who waits for what (see {@link Waiter}); made when someone first waits. */
  private waiters: Waiter[] | undefined;
  /** Set by {@link ToolRuns.cancel}: the reason, and whether calls were running then. */
  private aborted: { readonly reason: unknown; readonly whileRunning: boolean } | undefined;
  /** By index: whether the call's start was recorded in the ledger (its outcome is recorded too). */
  private recorded: boolean[] | undefined;

  constructor(
    private readonly toolset: Toolset,
    private readonly stepId: string,
    /** Hears of each result (none: no call is timed either). */
    private readonly listener: ToolRunListener | undefined,
    /** Asks for approval where a call needs it (none: no call can). */
    private readonly gate?: ApprovalGate,
    private readonly settings: ToolRunSettings = NO_SETTINGS,
  ) {}

  /** The calls, in the order they were made. */
  get calls(): readonly ToolCall[] {
    return this.callList ?? NONE;
  }

  /**
   * Hands a call to the toolset — after its approval, where it needs one: waiting for the decision
   * is part of the call's own future (its place in the results, its abort and its cleanup are a
   * running call's). `entry` says how the call comes to the gate (default: the toolset is asked).
   */
  dispatch(call: ToolCall, entry?: GateEntry): number {
    const index = this.add(call);
    const startedAt = this.startTime();
    this.pending++;
    const budgets = this.settings.callBudgets;
    if (budgets !== undefined) budgets.byIndex[index] = new CallBudget(this, budgets.limitMs);
    const context = new CallContext(this, call, this.stepId, index, this.settings.context, `${this.settings.ledger?.key ?? this.stepId}/${index}`);
    const gate = this.gate;
    if (gate === undefined) {
      this.handle(index, call, context, startedAt);
    } else {
      gate.pass(call, context, entry ?? CHECK).then(
        (outcome) => this.afterGate(index, call, context, outcome, startedAt),
        (error: unknown) => this.settle(index, call, threw(call, error), startedAt), // the gate never rejects; if it did, an error result
      );
    }
    return index;
  }

  /** Records a call whose result is known already (a resumed step's call that ran before); no listener hears of it. */
  adopt(call: ToolCall, result: ToolResult): number {
    const index = this.add(call);
    this.pending++;
    this.settleSoon(index, call, normalise(call, result), 0, false);
    return index;
  }

  /** Records a call the runtime will not run, with the error result the model gets instead. */
  skip(call: ToolCall, returnValue: ToolReturnValue): number {
    const index = this.add(call);
    this.pending++;
    this.settleSoon(index, call, { toolCallId: call.id, returnValue }, this.startTime());
    return index;
  }

  /** Calls whose time budget ran out and that were still running past the cleanup deadline after it (leaked). */
  get abandoned(): readonly ToolCall[] {
    return this.settings.callBudgets?.leaked?.slice() ?? NONE;
  }

  /** The step's `stepMs` / `idleMs` budgets (see {@link ToolRunSettings.deadline}). */
  get deadline(): StepDeadline | undefined {
    return this.settings.deadline;
  }

  /** How many calls have not settled yet. */
  get running(): number {
    return this.pending;
  }

  /** Whether {@link ToolRuns.cancel} was called (calls dispatched now would start aborted). */
  get cancelled(): boolean {
    return this.aborted !== undefined;
  }

  /** The reason given to {@link ToolRuns.cancel} while calls were running, if that happened. */
  get cancellation(): Cancellation | undefined {
    const aborted = this.aborted;
    return aborted?.whileRunning === true ? aborted : undefined;
  }

  /** How many calls have settled. */
  get settledCount(): number {
    return this.calls.length - this.pending;
  }

  /** The `n`th result to settle (from 0; `n` below {@link ToolRuns.settledCount}). */
  completed(n: number): ToolResult {
    return (this.completionOrder ?? this.results)![n]!;
  }

  /** Every result in call order (a new list); call it once no call is running. */
  settledResults(): ToolResult[] {
    if (this.pending > 0) throw new Error('ToolRuns.settledResults: calls are still running');
    return (this.results?.slice() ?? []) as ToolResult[];
  }

  /** Resolves on the next settlement or cancellation (or at once if nothing is running). */
  changed(): Promise<void> {
    if (this.pending === 0 || this.cancellation) return Promise.resolve();
    return this.wait('change') as Promise<unknown> as Promise<void>;
  }

  /**
   * Resolves when no call is running, or the calls were cancelled while running: with the
   * cancellation then (see {@link ToolRuns.cancellation}), else `undefined`.
   */
  settledOrCancelled(): Promise<Cancellation | undefined> {
    if (this.pending === 0 || this.cancellation) return Promise.resolve(this.cancellation);
    return this.wait('settled');
  }

  /** Aborts every running call through its signal. The first reason wins. */
  cancel(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = { reason, whileRunning: this.pending > 0 };
    this.controller?.abort(reason);
    this.wake();
  }

  /**
   * Cancels what still runs, then waits for it to settle, at most `deadlineMs`.
   *
   * @returns the calls still running at the deadline (leaked: they ignored their abort signal).
   */
  async reclaim(reason: unknown, deadlineMs: number): Promise<ToolCall[]> {
    if (this.pending === 0) return this.settings.callBudgets?.leaked?.slice() ?? [];
    this.cancel(reason);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, deadlineMs);
    });
    await Promise.race([this.idle(), deadline]);
    clearTimeout(timer);
    const leaked = this.calls.filter((_, index) => this.results?.[index] === undefined);
    const given = this.settings.callBudgets?.leaked;
    return given === undefined ? leaked : [...given, ...leaked];
  }

  /** The signal of call `index`: the step's calls' one, or its own when it has a time budget. */
  callSignal(index: number): AbortSignal {
    const budget = this.settings.callBudgets?.byIndex[index];
    return budget === undefined ? this.signal() : budget.signal();
  }

  /** The signal of the step's calls (created when first read, by a call's {@link CallContext}; aborted already after a cancel). */
  signal(): AbortSignal {
    let controller = this.controller;
    if (controller === undefined) {
      controller = this.controller = new AbortController();
      if (this.aborted) controller.abort(this.aborted.reason);
      // Every call of the step listens to this one signal: many parallel calls are normal, not a leak.
      if (this.calls.length >= MANY_CALLS) setMaxListeners(0, controller.signal);
    }
    return controller.signal;
  }

  /** When a call starts, for the duration its listener hears of (0 without a listener: nobody asks). */
  private startTime(): number {
    return this.listener === undefined ? 0 : performance.now();
  }

  /** Appends a call; returns its index. */
  private add(call: ToolCall): number {
    this.callList = append(this.callList, call);
    if (this.callList.length === MANY_CALLS && this.controller !== undefined) setMaxListeners(0, this.controller.signal);
    return this.callList.length - 1;
  }

  /** Resolves when no call is running. */
  private idle(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return this.wait('idle') as Promise<unknown> as Promise<void>;
  }

  /**
   * Runs a call — once its start is recorded, when the step has a ledger: a call whose start cannot
   * be recorded does not run.
   */
  private handle(index: number, call: ToolCall, context: CallContext, startedAt: number): void {
    const ledger = this.settings.ledger;
    if (ledger === undefined) {
      this.run(index, call, context, startedAt);
      return;
    }
    let recording: Promise<void> | undefined;
    try {
      // A call safe to run again need not survive a power cut: its record is not synced on its own.
      const sync = replayPolicyOf(this.toolset, call) !== 'safe';
      recording = ledger.callStarted(index, this.settings.content?.() ?? NO_CONTENT, this.calls, sync);
    } catch (error) {
      recording = Promise.reject(error);
    }
    if (recording === undefined) {
      // Recorded already (a ledger in memory): the call runs now.
      (this.recorded ??= [])[index] = true;
      this.run(index, call, context, startedAt);
      return;
    }
    recording.then(
      () => {
        if (this.aborted) {
          // Recorded, but never run: a redo takes it for a call that never started, not for an interrupted one.
          const notRun = { toolCallId: call.id, returnValue: toolNotExecuted('the step was cancelled') };
          try {
            ledger.callSettled(index, notRun, false);
          } catch {
            // then it counts as interrupted
          }
          this.settle(index, call, notRun, startedAt);
          return;
        }
        (this.recorded ??= [])[index] = true;
        this.run(index, call, context, startedAt);
      },
      (error: unknown) => this.settle(index, call, { toolCallId: call.id, returnValue: toolNotRecorded(describeError(error)) }, startedAt),
    );
  }

  /** Calls the toolset: its result, whatever `handle` did (returned, resolved, threw, rejected), settles the call. */
  private run(index: number, call: ToolCall, context: CallContext, startedAt: number): void {
    const budget = this.settings.callBudgets?.byIndex[index];
    if (budget !== undefined) budget.start(() => this.expire(index, call, budget, startedAt));
    let returned: unknown;
    try {
      const inScope = this.settings.inScope;
      returned = inScope ? inScope(call, index, () => this.toolset.handle(call, context)) : this.toolset.handle(call, context);
    } catch (error) {
      this.settleSoon(index, call, threw(call, error), startedAt);
      return;
    }
    // normalise never throws: a result whose getters throw becomes an error result, on both paths.
    if (isThenable(returned)) {
      Promise.resolve(returned).then(
        (value) => this.settle(index, call, normalise(call, value), startedAt),
        (error: unknown) => this.settle(index, call, threw(call, error), startedAt),
      );
    } else {
      this.settleSoon(index, call, normalise(call, returned), startedAt);
    }
  }

  private afterGate(index: number, call: ToolCall, context: CallContext, outcome: GateOutcome, startedAt: number): void {
    switch (outcome.type) {
      case 'run':
        // Approved, but the step may have been cancelled since: then the call does not start.
        if (context.signal.aborted) this.settle(index, call, { toolCallId: call.id, returnValue: toolNotExecuted('the step was cancelled') }, startedAt);
        else this.handle(index, call, context, startedAt);
        return;
      case 'deferred':
        this.settle(index, call, { toolCallId: call.id, returnValue: toolAwaitingApproval(), deferred: true }, startedAt);
        return;
      default:
        this.settle(index, call, { toolCallId: call.id, returnValue: outcome.returnValue }, startedAt);
    }
  }

  /**
   * Settles a call whose result is known now, one microtask later (results always arrive
   * asynchronously). A resolved promise, not `queueMicrotask`: Node wraps each of those in an async
   * resource.
   */
  private settleSoon(index: number, call: ToolCall, result: ToolResult, startedAt: number, heard = true): void {
    void RESOLVED.then(() => this.settle(index, call, result, startedAt, heard));
  }

  /**
   * Records the result of a call (counted in `pending` since it was added) and tells who waits; the
   * listener hears of it unless it is a result adopted from before (`heard` false).
   */
  private settle(index: number, call: ToolCall, result: ToolResult, startedAt: number, heard = true): void {
    const budget = this.settings.callBudgets?.byIndex[index];
    if (budget !== undefined) {
      if (budget.settled) return; // a call given up as leaked settles at last: its result was given already
      if (budget.settle()) result = { toolCallId: call.id, returnValue: toolTimedOut(call.function.name, budget.limitMs) };
    }
    const results = (this.results ??= new Array<ToolResult | undefined>(this.calls.length));
    const settledBefore = this.settledCount;
    results[index] = result;
    // An outcome is recorded only for a call the step still wanted: one that settles after a cancel was interrupted.
    if (this.recorded?.[index] === true && this.aborted === undefined) {
      try {
        this.settings.ledger!.callSettled(index, result);
      } catch {
        // a lost outcome only makes the call count as interrupted
      }
    }
    if (this.completionOrder !== undefined) this.completionOrder.push(result);
    else if (index !== settledBefore) this.completionOrder = [...(results.slice(0, settledBefore) as ToolResult[]), result];
    this.pending--;
    const listener = this.listener;
    if (heard && listener !== undefined) {
      try {
        listener.toolSettled(index, call, result, performance.now() - startedAt);
      } catch {
        // the listener delivers to guarded hooks; settling must go on
      }
    }
    this.wake();
  }

  /**
   * A call ran out of its time budget: its signal aborts with the error, and it gets
   * `cleanupTimeoutMs` to stop; still running then, it is given up as leaked, with the budget's
   * error result. Nothing happens for a step being cancelled (its cleanup reclaims the call).
   */
  private expire(index: number, call: ToolCall, budget: CallBudget, startedAt: number): void {
    if (this.aborted !== undefined || this.results?.[index] !== undefined) return;
    const error = new TimeoutBudgetError({ budget: 'toolCall', limitMs: budget.limitMs, stepId: this.stepId, toolCall: call });
    const budgets = this.settings.callBudgets!;
    budget.expire(error, budgets.graceMs, () => {
      (budgets.leaked ??= []).push(call);
      this.settle(index, call, { toolCallId: call.id, returnValue: toolTimedOut(call.function.name, budget.limitMs) }, startedAt);
    });
  }

  private wait(until: Waiter['until']): Promise<Cancellation | undefined> {
    return new Promise((resolve) => (this.waiters ??= []).push({ until, resolve }));
  }

  /** Something changed (a call settled, or the calls were cancelled): resolves whoever waited for it. */
  private wake(): void {
    const waiters = this.waiters;
    if (waiters === undefined) return;
    const idle = this.pending === 0;
    const cancellation = this.cancellation;
    let still: Waiter[] | undefined;
    for (const waiter of waiters) {
      const ready = waiter.until === 'change' || idle || (waiter.until === 'settled' && cancellation !== undefined);
      if (ready) waiter.resolve(cancellation);
      else (still ??= []).push(waiter);
    }
    this.waiters = still;
  }
}

/** The reason given to {@link ToolRuns.cancel} while calls were running. */
type Cancellation = { readonly reason: unknown };

/**
 * One wait: for the next settlement or cancellation (`change`), for no call running or the calls
 * cancelled (`settled`, resolved with the cancellation), or for no call running (`idle`).
 */
interface Waiter {
  readonly until: 'change' | 'settled' | 'idle';
  readonly resolve: (cancellation: Cancellation | undefined) => void;
}

/**
 * The {@link ToolContext} of one call: plain data, and a `signal` made when first read (an
 * AbortController cost ~10 µs on Node 20, and most tools never look). `signal` is an own, enumerable
 * getter (one shared function: the object keeps a fast, shared shape), so a spread copy of the
 * context has it too. An object literal with a getter of its own would be a dictionary (~0.5 KB).
 */
class CallContext implements ToolContext {
  declare readonly signal: AbortSignal;
  readonly #runs: ToolRuns;

  constructor(
    runs: ToolRuns,
    readonly toolCall: ToolCall,
    readonly stepId: string,
    readonly index: number,
    readonly context: unknown,
    readonly idempotencyKey: string,
  ) {
    this.#runs = runs;
    Object.defineProperty(this, 'signal', SIGNAL_PROPERTY);
  }

  static signalOf(context: CallContext): AbortSignal {
    return context.#runs.callSignal(context.index);
  }
}

/**
 * The time budget of one call (`timeouts.toolCallMs`): a timer from when the toolset is handed the
 * call, and a signal of the call's own (made when first read), aborted by the step's shared signal
 * or, when the budget runs out, with its {@link TimeoutBudgetError}.
 */
class CallBudget {
  #timer: ReturnType<typeof setTimeout> | undefined;
  #controller: AbortController | undefined;
  #shared: AbortSignal | undefined;
  #error: TimeoutBudgetError | undefined;
  /** Whether the call's result is recorded. */
  settled = false;

  constructor(
    private readonly runs: ToolRuns,
    readonly limitMs: number,
  ) {}

  /** The toolset is handed the call: the budget starts. */
  start(onTimeout: () => void): void {
    this.#timer = setTimeout(onTimeout, this.limitMs);
  }

  /** The call's own signal. */
  signal(): AbortSignal {
    let controller = this.#controller;
    if (controller === undefined) {
      controller = this.#controller = new AbortController();
      const shared = this.runs.signal();
      if (this.#error !== undefined) controller.abort(this.#error);
      else if (shared.aborted) controller.abort(shared.reason);
      else {
        this.#shared = shared;
        shared.addEventListener('abort', this, { once: true });
      }
    }
    return controller.signal;
  }

  /** The step's shared signal aborted (this object is its listener). */
  handleEvent(): void {
    this.#controller?.abort(this.#shared?.reason);
  }

  /** The budget ran out: aborts the call's signal with `error`; `onLeak` runs if the call has not settled `graceMs` later. */
  expire(error: TimeoutBudgetError, graceMs: number, onLeak: () => void): void {
    this.#error = error;
    this.#timer = setTimeout(onLeak, graceMs);
    this.#controller?.abort(error);
  }

  /** The call settles: stops the timers. Returns whether its budget ran out (its result is then the budget's). */
  settle(): boolean {
    this.settled = true;
    clearTimeout(this.#timer);
    this.#shared?.removeEventListener('abort', this);
    return this.#error !== undefined;
  }
}

const SIGNAL_PROPERTY: PropertyDescriptor = {
  get(this: CallContext): AbortSignal {
    return CallContext.signalOf(this);
  },
  enumerable: true,
  configurable: true,
};

const CHECK: GateEntry = Object.freeze({ type: 'check' });

const RESOLVED: Promise<void> = Promise.resolve();

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
