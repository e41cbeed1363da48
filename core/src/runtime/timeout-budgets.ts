/**
 * Timeout budgets: how long a turn, a step, a silence of the stream and a tool call may take, each
 * ending with a {@link TimeoutBudgetError} naming the budget that ran out, through the step's one
 * abort path (every running tool aborted and reclaimed, as on any exit).
 *
 * @module
 */
import { errorMarker, hasErrorMarker, markError } from '../error-marker.js';
import type { ToolCall } from '../message/parts.js';

/**
 * Timeout budgets, each in milliseconds (a positive number, at most 2³¹ − 1 ≈ 24.8 days); a budget
 * left out (or `undefined`) has no limit. `step({ timeouts })` takes `stepMs`, `idleMs` and
 * `toolCallMs`; an agent (`new Agent({ timeouts })`, `kernel.agent({ timeouts })`, or one turn's
 * `agent.run(input, { timeouts })`, merged over the agent's field by field) takes `turnMs` too, and
 * gives the others to each of its steps. A budget that runs out ends what it bounds with a
 * {@link TimeoutBudgetError} naming it. Anything else (an unknown key, a negative, zero, NaN or
 * infinite value, a value that is not a number) is a `TypeError` at the call.
 */
export interface TimeoutBudgets {
  /**
   * A whole turn (`agent.run` or `agent.resume`, each call its own budget): its steps, retries,
   * waits and writes. When it runs out, the running step is aborted (its tools reclaimed) and the
   * turn rejects with the error (`budget: 'turn'`, `turnId`). Agents only.
   */
  readonly turnMs?: number | undefined;
  /**
   * One step, from `step()` until its last tool call settled: the request, the stream, and the tool
   * calls that run after it returned. When it runs out, the step is aborted as by its signal: the
   * stream stops, every running tool is aborted and reclaimed, and the step (or, after it returned,
   * `toolResults()`) rejects with the error (`budget: 'step'`, `stepId`).
   */
  readonly stepMs?: number | undefined;
  /**
   * The longest the step waits for the provider with nothing arriving: from the request to the
   * first streamed part, and between two parts (time the step spends in awaited `onPart` hooks does
   * not count). Measured by the runtime, whatever the provider's own timeouts: it fires after
   * `idleMs` to 1.25 × `idleMs` of silence, and aborts the step as `stepMs` does (`budget: 'idle'`).
   * The agent loop does not retry it (a provider's own `APITimeoutError` is retried).
   */
  readonly idleMs?: number | undefined;
  /**
   * Each tool call, from when the toolset is handed it (after its approval, if it needs one) until
   * it settles. When it runs out, the call's own `ToolContext.signal` aborts with the error as its
   * reason (`budget: 'toolCall'`, `stepId`, `toolCall`); the model gets an error result naming the
   * budget (`Tool \`name\` timed out: …`) once the tool stopped, or after `cleanupTimeoutMs` if it
   * ignores its signal (then it is reported as leaked in the cleanup event). The step goes on.
   */
  readonly toolCallMs?: number | undefined;
}

/** Which budget ran out: that of the turn, the step, the stream's silence, or a tool call. */
export type TimeoutBudget = 'turn' | 'step' | 'idle' | 'toolCall';

const TIMEOUT_BUDGET_ERROR = errorMarker('TimeoutBudgetError');

/** The option of each budget, for messages. */
const OPTION_OF: Readonly<Record<TimeoutBudget, keyof TimeoutBudgets>> = { turn: 'turnMs', step: 'stepMs', idle: 'idleMs', toolCall: 'toolCallMs' };

/**
 * A timeout budget ran out (see {@link TimeoutBudgets}): `budget` says which, `limitMs` what it
 * was. It is the abort reason of what the budget ended (the step's signal, a tool call's signal),
 * the error a step or a turn rejects with, and what the tool result of a call that ran out names.
 */
export class TimeoutBudgetError extends Error {
  /** Which budget ran out. */
  readonly budget: TimeoutBudget;
  /** The budget, in ms. */
  readonly limitMs: number;
  /** The step it ended, or whose tool call it ended (`undefined` for a turn's budget). */
  readonly stepId: string | undefined;
  /** The tool call it ended (`budget: 'toolCall'` only). */
  readonly toolCall: ToolCall | undefined;
  /** The turn it ended, as the call ledger knows it (`budget: 'turn'` only). */
  readonly turnId: string | undefined;

  constructor(fields: {
    readonly budget: TimeoutBudget;
    readonly limitMs: number;
    readonly stepId?: string | undefined;
    readonly toolCall?: ToolCall | undefined;
    readonly turnId?: string | undefined;
  }) {
    const { budget, limitMs, stepId, toolCall, turnId } = fields;
    super(budgetMessage(budget, limitMs, stepId, toolCall, turnId));
    this.name = 'TimeoutBudgetError';
    this.budget = budget;
    this.limitMs = limitMs;
    this.stepId = stepId;
    this.toolCall = toolCall;
    this.turnId = turnId;
    markError(this, TIMEOUT_BUDGET_ERROR);
  }

  /** Whether `error` is a {@link TimeoutBudgetError} (also one from another copy of the package). */
  static isInstance(error: unknown): error is TimeoutBudgetError {
    return hasErrorMarker(error, TIMEOUT_BUDGET_ERROR);
  }
}

function budgetMessage(budget: TimeoutBudget, limitMs: number, stepId: string | undefined, toolCall: ToolCall | undefined, turnId: string | undefined): string {
  const option = `${OPTION_OF[budget]}: ${limitMs}`;
  switch (budget) {
    case 'turn':
      return `The turn${turnId === undefined ? '' : ` ${turnId}`} ran out of its time budget (${option}) and was aborted`;
    case 'step':
      return `Step ${stepId ?? '?'} ran out of its time budget (${option}) and was aborted`;
    case 'idle':
      return `Step ${stepId ?? '?'} waited longer than its idle budget for the provider's next part (${option}) and was aborted`;
    case 'toolCall':
      return `Tool call ${toolCall?.id ?? '?'} (${toolCall?.function.name ?? '?'}) of step ${stepId ?? '?'} ran out of its time budget (${option}) and was aborted`;
  }
}

/** The longest a timer can wait (`setTimeout` fires at once beyond it). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The budgets a step takes. */
const STEP_BUDGETS: ReadonlySet<string> = new Set(['stepMs', 'idleMs', 'toolCallMs']);
/** The budgets an agent (and a turn) takes. */
const TURN_BUDGETS: ReadonlySet<string> = new Set(['turnMs', 'stepMs', 'idleMs', 'toolCallMs']);

/**
 * Checks the budgets given to `owner` (`step()`, `Agent`, …): an object of known budgets, each a
 * positive number of ms a timer can wait, or `undefined`. Fail closed: a misspelt budget would be
 * no limit at all.
 *
 * @throws TypeError naming the option and what is wrong with it.
 */
export function checkTimeoutBudgets(owner: string, timeouts: unknown, forTurns: boolean): void {
  if (typeof timeouts !== 'object' || timeouts === null || Array.isArray(timeouts)) throw new TypeError(`${owner}: timeouts must be an object of budgets in ms`);
  const known = forTurns ? TURN_BUDGETS : STEP_BUDGETS;
  for (const key of Object.keys(timeouts)) {
    if (!known.has(key)) {
      const hint = key === 'turnMs' ? ' (a turn\'s budget: give it to the agent, or to agent.run)' : '';
      throw new TypeError(`${owner}: unknown timeout budget "${key}"${hint} (its budgets: ${[...known].join(', ')})`);
    }
    const value = (timeouts as Record<string, unknown>)[key];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > MAX_TIMER_MS) {
      throw new TypeError(`${owner}: timeouts.${key} must be a positive number of ms, at most ${MAX_TIMER_MS} (got ${describeValue(value)})`);
    }
  }
}

function describeValue(value: unknown): string {
  return typeof value === 'number' ? String(value) : typeof value === 'string' ? JSON.stringify(value) : typeof value;
}

/** The step's own budgets (`stepMs`, `idleMs`) of `timeouts`, when it has any. */
export function hasStepDeadline(timeouts: TimeoutBudgets | undefined): timeouts is TimeoutBudgets {
  return timeouts !== undefined && (timeouts.stepMs !== undefined || timeouts.idleMs !== undefined);
}

/** How many checks without a part make a silence of `idleMs` (a check every `idleMs / 4`). */
const IDLE_CHECKS = 4;

/**
 * What the stream loop tells the idle budget, at no cost per part beyond a counter: one periodic
 * timer for the whole stream (the technique of `@kosong/provider-ai-sdk`'s silence watchdog),
 * checking every `idleMs / 4` whether a part came since the check before; four checks in a row
 * without one (and not while the step was busy delivering a part) make a silence of `idleMs` to
 * 1.25 × `idleMs`.
 */
export class IdleWatch {
  /** Parts received so far (the stream loop counts them). */
  parts = 0;
  /** Whether the step is busy (delivering a part to an awaited hook): the provider is not waited for then. */
  busy = false;
  #seen = 0;
  #silentChecks = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    readonly ms: number,
    private readonly onSilence: () => void,
  ) {}

  /** The request is made: the clock starts. */
  start(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setTimeout(() => this.#check(), this.ms / IDLE_CHECKS);
  }

  /** The stream ended (or the step failed): stops for good. */
  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #check(): void {
    if (this.busy || this.parts !== this.#seen) {
      this.#seen = this.parts;
      this.#silentChecks = 0;
    } else if (++this.#silentChecks >= IDLE_CHECKS) {
      this.#timer = undefined;
      this.onSilence();
      return;
    }
    this.#timer?.refresh();
  }
}

/**
 * The deadlines of one step (`stepMs`, `idleMs`): an abort controller of its own, which the caller's
 * signal (if any) aborts too, and which a budget that runs out aborts with a
 * {@link TimeoutBudgetError}. The step uses its signal as it would use the caller's: the provider,
 * the stream's abort race and the tools' cancellation all hear it, so a budget ends the step by the
 * one path an abort takes. Made only for a step with such budgets.
 */
export class StepDeadline {
  readonly #controller = new AbortController();
  #stepTimer: ReturnType<typeof setTimeout> | undefined;
  /** The idle budget's watch, when the step has one. */
  readonly idle: IdleWatch | undefined;

  constructor(
    private readonly stepId: string,
    timeouts: TimeoutBudgets,
    private readonly callerSignal: AbortSignal | undefined,
  ) {
    const { stepMs, idleMs } = timeouts;
    if (callerSignal !== undefined) {
      if (callerSignal.aborted) this.#controller.abort(callerSignal.reason);
      else callerSignal.addEventListener('abort', this, { once: true });
    }
    if (stepMs !== undefined && !this.#controller.signal.aborted) {
      this.#stepTimer = setTimeout(() => this.#expire('step', stepMs), stepMs);
    }
    this.idle = idleMs === undefined ? undefined : new IdleWatch(idleMs, () => this.#expire('idle', idleMs));
  }

  /** The step's signal: aborted by the caller's, or by a budget that ran out. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** The caller's signal aborted (this object is its listener). */
  handleEvent(): void {
    this.#controller.abort(this.callerSignal!.reason);
  }

  /** The stream is asked for: the idle budget starts counting. */
  streaming(): void {
    if (!this.#controller.signal.aborted) this.idle?.start();
  }

  /** The stream is over (done or failed): the idle budget no longer counts. */
  streamEnded(): void {
    this.idle?.stop();
  }

  /** The step has its outcome: nothing fires any more. Idempotent. */
  stop(): void {
    clearTimeout(this.#stepTimer);
    this.#stepTimer = undefined;
    this.idle?.stop();
    this.callerSignal?.removeEventListener('abort', this);
  }

  #expire(budget: 'step' | 'idle', limitMs: number): void {
    this.#stepTimer = undefined;
    if (this.#controller.signal.aborted) return;
    this.idle?.stop();
    this.#controller.abort(new TimeoutBudgetError({ budget, limitMs, stepId: this.stepId }));
  }
}

/**
 * A turn's budget (`turnMs`): an abort controller the turn's steps and waits take as their signal,
 * aborted by the caller's signal (if any) or, when the budget runs out, with a
 * {@link TimeoutBudgetError}. {@link TurnDeadline.stop} when the turn ends.
 */
export class TurnDeadline {
  readonly #controller = new AbortController();
  readonly #timer: ReturnType<typeof setTimeout>;

  constructor(
    limitMs: number,
    turnId: string | undefined,
    private readonly callerSignal: AbortSignal | undefined,
  ) {
    if (callerSignal !== undefined) {
      if (callerSignal.aborted) this.#controller.abort(callerSignal.reason);
      else callerSignal.addEventListener('abort', this, { once: true });
    }
    this.#timer = setTimeout(() => this.#controller.abort(new TimeoutBudgetError({ budget: 'turn', limitMs, turnId })), limitMs);
  }

  /** The turn's signal. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** The caller's signal aborted (this object is its listener). */
  handleEvent(): void {
    this.#controller.abort(this.callerSignal!.reason);
  }

  /** The turn ended. */
  stop(): void {
    clearTimeout(this.#timer);
    this.callerSignal?.removeEventListener('abort', this);
  }
}
