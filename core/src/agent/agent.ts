import { randomUUID } from '../random-uuid.js';
import type { Message } from '../message/message.js';
import type { StreamedMessagePart, ToolCall } from '../message/parts.js';
import type { FinishReason } from '../provider/chat-provider.js';
import { mergeGenerationOptions, type GenerationOptions } from '../provider/generation-options.js';
import { addUsage, tokenUsage, totalTokens, type TokenUsage } from '../provider/token-usage.js';
import { abortableDelay } from '../runtime/abort.js';
import { StructuredOutputError } from '../output/output-errors.js';
import type { InferOutput, OutputOption } from '../output/output-schema.js';
import { ContextWrappers } from '../runtime/hooks/context-wrappers.js';
import { DEFAULT_MAX_HOOK_FAILURES } from '../runtime/defaults.js';
import { isThenable, writeHookErrorToStderr, type HookErrorHandler, type HookFailureKind } from '../runtime/hooks/hook-guard.js';
import type { StepOptions, StepResumption } from '../runtime/step.js';
import { checkTimeoutBudgets, TurnDeadline, type TimeoutBudgets } from '../runtime/timeout-budgets.js';
import type { StepResult } from '../runtime/step-result.js';
import type { NamedStepHooks, StepStartEvent, TurnScope } from '../runtime/hooks/step-hooks.js';
import { isApprovalDecision, type ApprovalCallback, type ApprovalDecision } from '../tooling/approval.js';
import type { ToolResult } from '../tooling/tool-result.js';
import { ApprovalPendingError, NoPendingApprovalError, ResumeConflictError } from './approval-errors.js';
import { MemoryCallLedger, stepLedgerOf, type CallLedger, type OpenStep } from './call-ledger.js';
import { checkCompactionOptions, compactionCut, CompactionError, historyTokens, summaryMessage, type Compaction, type CompactionOptions, type HistoryTokens } from './compaction.js';
import type { AgentContext } from './context.js';
import { LinearContext } from './linear-context.js';
import { pendingApprovals, type PendingApproval, type PendingStep } from './pending-step.js';
import { defaultRetryPolicy, isRetryableError, retryDelayMs, type RetryPolicy } from './retry.js';
import { toolResultToMessage } from './tool-message.js';

/**
 * Runs one step: `step()` with a provider and toolset, or a kernel runner's `step`. Its options are
 * `step()`'s own (see {@link StepOptions}), as the agent sets them for the step: pass them all on
 * (`(options) => step({ ...options, provider, toolset })`). Two matter beyond the request: `resume`
 * (set when the agent completes a step whose calls waited for approval, or one the call ledger
 * holds: `step()` then completes that step instead of calling the provider) and `ledger` (where the
 * step records its calls: a step function that drops it runs calls unrecorded, and a redone step
 * could run them twice). Without `onApproval`, a kernel runner asks its scope's `ApprovalHandler`, if
 * any; else such calls are deferred.
 */
export type StepFunction = (options: Pick<StepOptions<unknown, OutputOption>, AgentStepOption>) => Promise<StepResult>;

/** The step options the agent sets for each step (see {@link StepFunction}). */
type AgentStepOption = 'systemPrompt' | 'history' | 'signal' | 'hooks' | 'generation' | 'onApproval' | 'approvalTimeoutMs' | 'resume' | 'context' | 'output' | 'ledger' | 'timeouts';

/** What happens in an agent turn, as it happens. `step` counts from 1 within the turn. */
export type AgentEvent =
  | { readonly type: 'step_start'; readonly step: number; readonly attempt: number }
  | { readonly type: 'part'; readonly step: number; readonly part: StreamedMessagePart }
  | { readonly type: 'tool_call'; readonly step: number; readonly toolCall: ToolCall }
  | { readonly type: 'tool_result'; readonly step: number; readonly result: ToolResult }
  /** A call needs approval: the approval handler is asked (or, without one, it is deferred). */
  | { readonly type: 'approval_request'; readonly step: number; readonly toolCall: ToolCall; readonly index: number; readonly replay?: true }
  /** The decision about a call that needed approval. */
  | { readonly type: 'approval_decision'; readonly step: number; readonly toolCall: ToolCall; readonly index: number; readonly decision: ApprovalDecision }
  | {
      readonly type: 'retry';
      readonly step: number;
      readonly attempt: number;
      readonly nextAttempt: number;
      readonly delayMs: number;
      readonly error: unknown;
    }
  | {
      readonly type: 'step_end';
      readonly step: number;
      readonly message: Message;
      readonly toolResults: readonly ToolResult[];
      readonly usage: TokenUsage | undefined;
      readonly finishReason: FinishReason | undefined;
    };

/**
 * Options of an {@link Agent}. `systemPrompt`, `generation`, `output` and `timeouts` are `step()`'s
 * (see {@link StepOptions}), given to every step of every turn: a turn's `generation` and `timeouts`
 * are merged over the agent's, a turn's `output` wins over it; the turn's last step (the one without
 * tool calls) gives the turn's `output`. `timeouts.turnMs` bounds each `run` and `resume`; bad
 * `timeouts` are a `TypeError` when the agent is made.
 */
export interface AgentOptions extends Pick<StepOptions<unknown, OutputOption>, 'systemPrompt' | 'generation' | 'output' | 'timeouts'> {
  /** The agent's name, for telemetry (`TurnScope.agent`: the OpenTelemetry plugin's `invoke_agent {name}` span). */
  readonly name?: string;
  /** How to run one step. */
  readonly step: StepFunction;
  /** The conversation (a `LinearContext`, or any other {@link AgentContext}); default: a new in-memory `LinearContext`. */
  readonly context?: AgentContext;
  /**
   * When the model's last answer is not the structured output asked for (a `StructuredOutputError`),
   * show it its mistake once: its answer and a message naming the issues go into the context, and the
   * step is tried again (a `retry` agent event with no delay; the hooks' `onRetry` is for failed
   * requests only). Default `false`: the turn fails at once.
   */
  readonly retryInvalidOutput?: boolean;
  /** Steps per turn at most (default {@link DEFAULT_MAX_STEPS}). */
  readonly maxSteps?: number;
  /** Retry policy of failed provider calls (merged into {@link defaultRetryPolicy}). */
  readonly retry?: Partial<RetryPolicy>;
  /** Random source for retry jitter (tests pass a fixed one). */
  readonly random?: () => number;
  /** Receives failures of `onEvent` callbacks; default one line on stderr. */
  readonly onHookError?: HookErrorHandler;
  /** Told before each retry wait, with the id of the failed attempt (`kernel.agent()` passes it to the hooks' `onRetry`). */
  readonly onRetry?: (retry: AgentRetry) => void;
  /**
   * Decides about calls that need approval, in every turn (a turn's own wins). Without one, the
   * kernel's `ApprovalHandler` decides (for `kernel.agent()`), else such calls are deferred: the
   * turn ends with `stopReason: 'approval_required'`.
   */
  readonly onApproval?: ApprovalCallback;
  /**
   * How long a call may wait for a decision: the handler's (then it is denied, and the failure
   * reported), and a deferred call's (a later `resume` then denies it as timed out, whatever the
   * decisions say). Default: no limit.
   */
  readonly approvalTimeoutMs?: number;
  /**
   * Compacts the history when it nears the model's context window: before each step that asks the
   * model, when the history's tokens (the provider's count of the last step, plus an estimate of the
   * messages since; an estimate of it all before the first count) reach `threshold` of
   * `windowTokens`, its older turns are replaced by one summary message (see {@link CompactionOptions}).
   * The context must have `compact()` (`LinearContext` and `RedisContext` do). Default: none.
   */
  readonly compaction?: CompactionOptions;
  /**
   * Runs each turn inside the contexts of hooks the loop does not see (`kernel.agent()` passes its
   * scope's `runInContext` hooks). Must call `run` once, synchronously, and return its result.
   */
  readonly runTurn?: <T>(turn: TurnScope, run: () => T) => T;
}

/** The steps of a turn at most when {@link AgentOptions.maxSteps} is not given. */
export const DEFAULT_MAX_STEPS = 100;

/** The fraction of the window at which the history is compacted, when `compaction.threshold` is not given. */
const DEFAULT_COMPACTION_THRESHOLD = 0.8;
/** The last messages a compaction keeps, when `compaction.keepRecent` is not given. */
const DEFAULT_KEEP_RECENT = 6;

/** A retry the loop is about to wait for. */
export interface AgentRetry {
  /** The id of the attempt that failed. */
  readonly stepId: string;
  readonly step: number;
  readonly attempt: number;
  readonly nextAttempt: number;
  readonly delayMs: number;
  readonly error: unknown;
  /** The turn's run context. */
  readonly context?: unknown;
}

/**
 * Options of one {@link Agent.run}. `signal`, `hooks`, `generation`, `onApproval`, `context`,
 * `output` and `timeouts` are `step()`'s (see {@link StepOptions}), given to every step of the turn:
 * `signal` also aborts a retry wait, and nothing of an aborted step is saved; `hooks` are added to
 * each step's (after a kernel scope's hooks); the turn's `generation` and `timeouts` are merged over
 * the agent's (the turn's win, field by field; `timeouts.turnMs` bounds this run, or this resume, as
 * a whole); its `onApproval` and `output` win over the agent's. `context` is the turn's
 * run context (the user, their auth, a database handle), not the conversation (that is
 * {@link AgentOptions.context}).
 *
 * @typeParam S - the turn's structured output schema, when one is asked for.
 */
export interface AgentRunOptions<S extends OutputOption | undefined = OutputOption | undefined>
  extends Pick<StepOptions<unknown, S>, 'signal' | 'hooks' | 'generation' | 'onApproval' | 'context' | 'output' | 'timeouts'> {
  /** Every event of the turn. Guarded: a failure is reported and never changes the turn. */
  readonly onEvent?: (event: AgentEvent) => void | Promise<void>;
  /**
   * The turn this run belongs to, for the call ledger's keys (each call's `idempotencyKey` is
   * `[session/]turn/step/index`, the step counted in the turn): its `id` (default: a new random one)
   * and how many of its steps ran before this run (default 0: a worker that takes a turn over from
   * a lost one passes the steps done, so the keys go on where they were).
   */
  readonly turn?: AgentTurn;
}

/** A turn's identity in the call ledger (see {@link AgentRunOptions.turn}). */
export interface AgentTurn {
  readonly id?: string;
  readonly stepsBefore?: number;
}

/** Options of {@link Agent.resume}: those of a turn, and the decisions about the waiting calls. */
export interface AgentResumeOptions extends AgentRunOptions {
  /**
   * Decisions about the waiting calls, by tool call id (calls sharing an id share it). A waiting
   * call without a decision is asked of the approval handler again (which may defer it again).
   */
  readonly decisions?: Readonly<Record<string, ApprovalDecision>>;
}

/**
 * Why a turn ended: the last step made no tool calls; the turn reached `maxSteps`; or calls of the
 * last step wait for approval (see {@link AgentTurnResult.pendingApprovals} and {@link Agent.resume}).
 */
export type AgentStopReason = 'no_tool_calls' | 'max_steps' | 'approval_required';

/**
 * The outcome of one turn.
 *
 * @typeParam TOutput - the type of the structured output, when one was asked for.
 */
export interface AgentTurnResult<TOutput = unknown> {
  /** The last assistant message. */
  readonly message: Message;
  readonly steps: number;
  /** Usage summed over the turn's successful steps (before a resume, too). */
  readonly usage: TokenUsage;
  readonly stopReason: AgentStopReason;
  /** With `approval_required`: the calls that wait, in call order. */
  readonly pendingApprovals?: readonly PendingApproval[];
  /** With `no_tool_calls` and structured output asked for: the last step's output, parsed and validated. */
  readonly output?: TOutput;
}

/**
 * The agent loop: runs steps until one makes no tool calls (or `maxSteps` is reached), adding
 * each step's assistant message and one `tool` message per result, in call order, to the context.
 *
 * Retryable provider failures (connection, timeout, empty response, 429/500/502/503/504/529) are retried
 * with exponential backoff and jitter, honouring `retry-after`; the waits are abortable. A step's
 * messages are added only once the step and all its tools have finished, in one durable write, so
 * a failed or aborted attempt never leaves a partial assistant message in the context.
 */
export class Agent {
  readonly context: AgentContext;
  private readonly policy: RetryPolicy;
  /** The ledger of a context that has none of its own (in memory: it protects retries in this process only). */
  private readonly memoryLedger: MemoryCallLedger | undefined;
  /** The provider's count of the history's tokens at the last step (for compaction). */
  private lastTokenCount: HistoryTokens | undefined;

  constructor(private readonly options: AgentOptions) {
    if (options.timeouts !== undefined) checkTimeoutBudgets('Agent', options.timeouts, true);
    this.context = options.context ?? new LinearContext();
    this.policy = { ...defaultRetryPolicy, ...options.retry };
    this.memoryLedger = this.context.ledger === undefined ? new MemoryCallLedger() : undefined;
    if (options.compaction !== undefined) {
      checkCompactionOptions('Agent', options.compaction);
      if (typeof this.context.compact !== 'function') throw new TypeError('Agent: compaction needs a context that can compact (one with compact(), as LinearContext and RedisContext)');
    }
  }

  /**
   * Compacts the history now (as the agent does when it nears the window; `force`: whatever its
   * size): the older turns become one summary message. Resolves with what it did, or `undefined`
   * when there was nothing to compact (or, without `force`, no need). Not while a turn runs.
   *
   * @throws TypeError without `compaction` options; {@link ResumeConflictError} while a turn runs;
   *   {@link CompactionError} when the summarizer fails (the history is unchanged).
   */
  async compact(options: { readonly signal?: AbortSignal; readonly force?: boolean } = {}): Promise<Compaction | undefined> {
    if (this.options.compaction === undefined) throw new TypeError('Agent.compact(): the agent has no compaction options');
    return this.claimed(() => this.compactIfDue(options.signal, options.force === true));
  }

  /** Compacts when the history's tokens reach the threshold (or `force`), unless a step is pending or open in the ledger. */
  private async compactIfDue(signal: AbortSignal | undefined, force: boolean): Promise<Compaction | undefined> {
    const options = this.options.compaction;
    if (options === undefined || this.context.pendingStep !== undefined || this.ledger.openStep !== undefined) return undefined;
    const history = this.context.history;
    const tokensBefore = historyTokens(history, this.options.systemPrompt, this.lastTokenCount);
    if (!force && tokensBefore < (options.threshold ?? DEFAULT_COMPACTION_THRESHOLD) * options.windowTokens) return undefined;
    const cut = compactionCut(history, options.keepRecent ?? DEFAULT_KEEP_RECENT);
    if (cut === undefined) return undefined;
    let text: unknown;
    try {
      text = await options.summarizer(history.slice(0, cut), signal === undefined ? {} : { signal });
    } catch (error) {
      signal?.throwIfAborted();
      throw new CompactionError(`Compaction failed: the summarizer threw (${error instanceof Error ? error.message : String(error)})`, { cause: error });
    }
    signal?.throwIfAborted();
    if (typeof text !== 'string' || text.trim() === '') throw new CompactionError('Compaction failed: the summarizer gave no summary text');
    const summary = summaryMessage(text);
    await this.context.compact!({ replaces: cut, summary });
    this.lastTokenCount = undefined;
    return { replaced: cut, tokensBefore, tokensAfter: historyTokens(this.context.history, this.options.systemPrompt, undefined), summary };
  }

  /** The call ledger steps record their calls in: the context's, or one in memory. */
  private get ledger(): CallLedger {
    return this.context.ledger ?? this.memoryLedger!;
  }

  /**
   * Runs one turn: adds `input` (a user message, or messages) to the context, then steps.
   *
   * When calls of a step need approval and their decision is deferred, the turn ends with
   * `stopReason: 'approval_required'` and the waiting calls in `pendingApprovals`; the step is
   * recorded in the context as pending (not in the history), and {@link Agent.resume} goes on.
   *
   * When the context's call ledger holds a step that is not in the history (its process was killed
   * mid-step, or an earlier turn failed after its calls started), that step is completed first, from
   * its records, as the run's step 1 (see `CallLedger`): nothing of it is asked of the model again,
   * and no call that started is run again unless its replay policy allows. The input follows it.
   *
   * @throws the last error when a step fails for good (not retryable, or out of attempts), or the
   * abort reason; the context then holds everything up to the last complete step.
   * {@link ApprovalPendingError} if a step of the context waits for approval (also when the
   * recovered step defers a call: the input is then not added). {@link ResumeConflictError} if
   * another turn of this context is in progress.
   */
  async run<S extends OutputOption | undefined = undefined>(
    input: string | Message | readonly Message[],
    runOptions: AgentRunOptions<S> = {},
  ): Promise<AgentTurnResult<InferOutput<S>>> {
    runOptions.signal?.throwIfAborted();
    const pending = this.context.pendingStep;
    if (pending) throw new ApprovalPendingError(pendingApprovals(pending));
    const inputs: readonly Message[] =
      typeof input === 'string' ? [{ role: 'user', content: [{ type: 'text', text: input }] }] : isMessageList(input) ? input : [input];
    const turn = turnOf(runOptions.turn);
    const budgeted = this.withBudgets(runOptions, turn.id);
    return this.bounded(budgeted, (runOptions) =>
      this.claimed(() =>
        this.inTurnScope(runOptions, async () => {
          const open = this.ledger.openStep;
          if (open) {
            // A step the ledger recorded and the history does not hold: it is completed first, from its records.
            const turnResult = await this.steps(turn, 1, tokenUsage(), runOptions, { key: open.key, pending: undefined, decisions: {} }, inputs);
            return turnResult as AgentTurnResult<InferOutput<S>>;
          }
          await this.context.append(...inputs);
          // The output's type is the schema's: the step parsed and validated it with that schema.
          return (await this.steps(turn, 1, tokenUsage(), runOptions, undefined, NO_MESSAGES)) as AgentTurnResult<InferOutput<S>>;
        }),
      ),
    );
  }

  /**
   * Goes on with the turn whose calls wait for approval, in this process or in another one that
   * restored the same context: completes the pending step — calls that ran before keep their
   * results, approved calls run now, denied ones give the model the denial — then steps on as
   * `run` does (the turn's step count and usage go on from the pending step). If the agent's
   * `approvalTimeoutMs` passed since the calls were deferred, they are denied as timed out.
   *
   * Aborting (or a failure) leaves the step pending, as it was.
   *
   * A call that an earlier resume started and whose outcome the call ledger never got (its process
   * was killed) is not run again unless its replay policy allows (see `ReplayPolicy`).
   *
   * @throws {@link NoPendingApprovalError} if no step is pending, or a decision names a call that
   * does not wait; a `TypeError` for a value that is no decision; {@link ResumeConflictError} if
   * another resume (or run) of this context is in progress, before anything runs; otherwise as `run`.
   */
  async resume(options: AgentResumeOptions = {}): Promise<AgentTurnResult> {
    options.signal?.throwIfAborted();
    const pending = this.context.pendingStep;
    if (!pending) throw new NoPendingApprovalError();
    const decisions = options.decisions ?? {};
    checkDecisions(pending, decisions);
    const turn = pending.turn ?? turnOf(options.turn);
    const key = pending.key ?? this.stepKey(turn, pending.step);
    const budgeted = this.withBudgets(options, turn.id);
    return this.bounded(budgeted, (options) =>
      this.claimed(() => {
        // Another resume may have completed the step while this one waited for the store's claim.
        if (this.context.pendingStep?.stepId !== pending.stepId) throw new ResumeConflictError('The step was resumed by another resume meanwhile; nothing was run');
        return this.inTurnScope(options, () => this.steps(turn, pending.step, pending.turnUsage, options, { key, pending, decisions }, NO_MESSAGES));
      }),
    );
  }

  /**
   * A turn's options with its budgets: the turn's `timeouts` merged over the agent's (checked), and,
   * with `turnMs`, the turn's deadline, whose signal (aborted by the caller's too) the turn's steps
   * and waits take instead of the caller's.
   *
   * @throws TypeError for bad `timeouts`.
   */
  private withBudgets<O extends AgentRunOptions>(runOptions: O, turnId: string): { readonly options: O; readonly deadline: TurnDeadline | undefined } {
    const own = runOptions.timeouts;
    if (own !== undefined) checkTimeoutBudgets('Agent.run()', own, true);
    const agent = this.options.timeouts;
    if (own === undefined && agent === undefined) return { options: runOptions, deadline: undefined };
    const timeouts: TimeoutBudgets = agent === undefined ? own! : own === undefined ? agent : mergeBudgets(agent, own);
    const turnMs = timeouts.turnMs;
    if (turnMs === undefined) return { options: { ...runOptions, timeouts }, deadline: undefined };
    const deadline = new TurnDeadline(turnMs, turnId, runOptions.signal);
    return { options: { ...runOptions, timeouts, signal: deadline.signal }, deadline };
  }

  /** Runs a turn within its deadline, if it has one: stopped when the turn ends, however it ends. */
  private bounded<O, T>(budgeted: { readonly options: O; readonly deadline: TurnDeadline | undefined }, run: (options: O) => Promise<T>): Promise<T> {
    const { options, deadline } = budgeted;
    if (deadline === undefined) return run(options);
    let running: Promise<T>;
    try {
      running = run(options);
    } catch (error) {
      deadline.stop();
      return Promise.reject(error);
    }
    return running.finally(() => deadline.stop());
  }

  /**
   * Runs `run` holding the context: one turn (run or resume) at a time, in this process (at once, before
   * anything else happens) and, for a store shared between processes, through the context's `claim`.
   *
   * @throws ResumeConflictError when another turn holds it.
   */
  private claimed<T>(run: () => Promise<T>): Promise<T> {
    const context = this.context;
    if (HELD.has(context)) return Promise.reject(new ResumeConflictError());
    HELD.add(context);
    const go = async (): Promise<T> => {
      const release = context.claim ? await context.claim() : undefined;
      try {
        const result = await run();
        await context.flush?.(); // what lagged behind the ledger (a step's append) is durable before the turn returns
        return result;
      } catch (error) {
        await context.flush?.().catch(() => undefined); // nothing left in flight; the turn's own error is the one to report
        throw error;
      } finally {
        await release?.();
      }
    };
    return go().finally(() => HELD.delete(context));
  }

  /** The call ledger's key of step `stepNo` of a turn. */
  private stepKey(turn: Required<AgentTurn>, stepNo: number): string {
    const session = this.context.sessionKey;
    return `${session === undefined ? '' : `${session}/`}${turn.id}/${turn.stepsBefore + stepNo}`;
  }

  /** Runs the steps of a turn from `firstStep`; the first one completes `resuming` when given. */
  private async steps(
    turn: Required<AgentTurn>,
    firstStep: number,
    turnUsage: TokenUsage,
    runOptions: AgentRunOptions,
    resuming: Resuming | undefined,
    inputAfterFirst: readonly Message[],
  ): Promise<AgentTurnResult> {
    const emit = this.emitter(runOptions.onEvent);
    const maxSteps = this.options.maxSteps ?? DEFAULT_MAX_STEPS;
    let usage = turnUsage;
    let outputRetried = false;
    for (let stepNo = firstStep; ; stepNo++) {
      const resume = stepNo === firstStep ? resuming : undefined;
      const key = resume?.key ?? this.stepKey(turn, stepNo);
      if (resume === undefined && this.options.compaction !== undefined) await this.compactIfDue(runOptions.signal, false);
      let stepped: { result: StepResult; toolResults: readonly ToolResult[]; resumption: StepResumption | undefined };
      try {
        stepped = await this.stepWithRetries(stepNo, runOptions, emit, key, resume);
      } catch (error) {
        if (!StructuredOutputError.isInstance(error) || outputRetried || this.options.retryInvalidOutput !== true) throw error;
        outputRetried = true;
        if (error.usage) usage = addUsage(usage, error.usage);
        await this.context.append(error.response, outputCorrection(error));
        emit({ type: 'retry', step: stepNo, attempt: 1, nextAttempt: 2, delayMs: 0, error });
        stepNo--; // the same step again, now that the model knows its mistake
        continue;
      }
      const { result, toolResults, resumption } = stepped;
      if (resumption && result.message !== resumption.message) {
        throw new Error('Agent: the step function did not complete the step it was given (pass its `resume` option on to step())');
      }
      // A completed step made no request: its usage is the pending step's (none for one redone from the ledger).
      const stepUsage = resumption ? resume?.pending?.usage : result.usage;
      const before = usage;
      if (stepUsage) usage = addUsage(usage, stepUsage);
      if (toolResults.some((r) => r.deferred === true)) {
        const pending: PendingStep = resume?.pending
          ? { ...resume.pending, results: toolResults.map(settledOnly) }
          : this.pendingStep(stepNo, result, toolResults, before, key, turn);
        await this.context.deferStep(pending);
        // The input that was to follow a recovered step is not added: the caller sends it again once the step is resumed.
        if (inputAfterFirst.length > 0) throw new ApprovalPendingError(pendingApprovals(pending));
        return { message: result.message, steps: stepNo, usage, stopReason: 'approval_required', pendingApprovals: pendingApprovals(pending) };
      }
      const messages = [result.message, ...toolResults.map(toolResultToMessage)];
      if (resume?.pending) await this.context.completeStep(resume.pending.stepId, ...messages);
      else await this.context.append(...messages);
      this.memoryLedger?.close();
      // The provider counted the request (the history up to the step) and its answer.
      if (!resumption && result.usage) this.lastTokenCount = { reported: totalTokens(result.usage), covers: this.context.history.length - toolResults.length };
      if (resume && inputAfterFirst.length > 0) await this.context.append(...inputAfterFirst);
      emit({ type: 'step_end', step: stepNo, message: result.message, toolResults, usage: stepUsage, finishReason: result.finishReason });
      if (result.toolCalls.length === 0) {
        const turn: AgentTurnResult = { message: result.message, steps: stepNo, usage, stopReason: 'no_tool_calls' };
        return result.output === undefined ? turn : { ...turn, output: result.output };
      }
      if (stepNo >= maxSteps) return { message: result.message, steps: stepNo, usage, stopReason: 'max_steps' };
    }
  }

  /** The pending step of a step that deferred calls (`turnUsage`: what the turn's earlier steps used). */
  private pendingStep(stepNo: number, result: StepResult, toolResults: readonly ToolResult[], turnUsage: TokenUsage, key: string, turn: Required<AgentTurn>): PendingStep {
    const deferredAt = Date.now();
    const timeout = this.options.approvalTimeoutMs;
    return {
      stepId: result.stepId,
      step: stepNo,
      message: result.message,
      results: toolResults.map(settledOnly),
      usage: result.usage,
      turnUsage,
      messageId: result.id,
      finishReason: result.finishReason,
      deferredAt,
      expiresAt: timeout === undefined ? undefined : deferredAt + timeout,
      key,
      turn: { id: turn.id, stepsBefore: turn.stepsBefore },
    };
  }

  /**
   * What `step()` needs to complete a step instead of generating one: the pending step (with these
   * decisions) and what the ledger recorded of its calls, or the ledger's open step alone. Calls with
   * an outcome keep it; started calls without one are interrupted (their replay policy decides);
   * calls of an open step that never started run as in a new step.
   */
  private resumption(resuming: Resuming, open: OpenStep | undefined): StepResumption {
    const { pending, decisions } = resuming;
    const ledgerCalls = open?.key === resuming.key ? open.calls : undefined;
    if (pending === undefined) {
      if (open === undefined || ledgerCalls === undefined) throw new Error('Agent: the step to complete is neither pending nor in the call ledger');
      return {
        message: open.message,
        results: ledgerCalls.map((call) => call.result),
        entries: ledgerCalls.map((call) => (call.result !== undefined ? undefined : call.started ? 'interrupted' : 'check')),
        finishReason: undefined,
      };
    }
    const expired = pending.expiresAt !== undefined && Date.now() > pending.expiresAt;
    const timedOut: ApprovalDecision = { type: 'deny', reason: `nobody decided about it within ${(pending.expiresAt ?? 0) - pending.deferredAt} ms` };
    const calls = pending.message.toolCalls ?? [];
    const results = calls.map((_, index) => pending.results[index] ?? ledgerCalls?.[index]?.result);
    return {
      message: pending.message,
      results,
      decisions: calls.map((call, index) => {
        if (results[index] !== undefined) return undefined;
        if (expired) return timedOut;
        return Object.hasOwn(decisions, call.id) ? decisions[call.id] : undefined;
      }),
      entries: calls.map((_, index) => (results[index] === undefined && ledgerCalls?.[index]?.started === true ? 'interrupted' : undefined)),
      messageId: pending.messageId,
      finishReason: pending.finishReason,
    };
  }

  private async stepWithRetries(
    stepNo: number,
    runOptions: AgentRunOptions,
    emit: (event: AgentEvent) => void,
    key: string,
    resuming: Resuming | undefined,
  ): Promise<{ result: StepResult; toolResults: readonly ToolResult[]; resumption: StepResumption | undefined }> {
    const { signal } = runOptions;
    let attemptStepId = '';
    // The id of each attempt is learnt only for `onRetry`: without it (and without other hooks) the step takes its path without hooks.
    const hooks: NamedStepHooks[] = [
      ...(this.options.onRetry === undefined ? [] : [{ name: 'agent', hooks: { onStepStart: (e: StepStartEvent) => void (attemptStepId = e.stepId) } }]),
      ...(runOptions.hooks ?? []),
    ];
    if (runOptions.onEvent) hooks.push(eventHooks(stepNo, emit));
    const generation = turnGeneration(this.options.generation, runOptions.generation);
    const onApproval = runOptions.onApproval ?? this.options.onApproval;
    const approvalTimeoutMs = this.options.approvalTimeoutMs;
    const output = runOptions.output ?? this.options.output;
    const timeouts = stepBudgets(runOptions.timeouts);
    for (let attempt = 1; ; attempt++) {
      emit({ type: 'step_start', step: stepNo, attempt });
      // What the ledger holds of this step (a retry of a step whose calls started) is completed, never asked of the model again.
      const open = this.ledger.openStep;
      const resume = resuming ? this.resumption(resuming, open) : open?.key === key ? this.resumption({ key, pending: undefined, decisions: {} }, open) : undefined;
      try {
        const result = await this.options.step({
          systemPrompt: this.options.systemPrompt,
          history: this.context.history.slice(),
          ...(signal ? { signal } : {}),
          ...(generation ? { generation } : {}),
          ...(onApproval ? { onApproval } : {}),
          ...(approvalTimeoutMs === undefined ? {} : { approvalTimeoutMs }),
          ...(resume ? { resume } : {}),
          ...(runOptions.context === undefined ? {} : { context: runOptions.context }),
          ...(output === undefined ? {} : { output }),
          ...(timeouts === undefined ? {} : { timeouts }),
          ledger: stepLedgerOf(this.ledger, key),
          hooks,
        });
        return { result, toolResults: await result.toolResults(), resumption: resume };
      } catch (error) {
        if (signal?.aborted || !isRetryableError(error) || attempt >= this.policy.maxAttempts) throw error;
        const delayMs = retryDelayMs(this.policy, attempt, error, this.options.random);
        emit({ type: 'retry', step: stepNo, attempt, nextAttempt: attempt + 1, delayMs, error });
        try {
          this.options.onRetry?.({ stepId: attemptStepId, step: stepNo, attempt, nextAttempt: attempt + 1, delayMs, error, context: runOptions.context });
        } catch {
          // a notification; the kernel's delivers to guarded hooks
        }
        await abortableDelay(delayMs, signal);
      }
    }
  }

  /**
   * Runs a turn inside the `runInContext` hooks: the kernel's (`runTurn`, outermost), then those of
   * the turn's own hooks. Nothing is wrapped (nor allocated) when there are none.
   */
  private inTurnScope<T>(runOptions: AgentRunOptions, run: () => T): T {
    const { runTurn } = this.options;
    const hooks = runOptions.hooks;
    if (!runTurn && !hooks?.some((entry) => typeof entry.hooks.runInContext === 'function')) return run();
    const turn: TurnScope = Object.freeze({
      kind: 'turn',
      turnId: randomUUID(),
      agent: this.options.name,
      tenant: undefined,
      provider: undefined,
      model: undefined,
      context: runOptions.context,
    });
    const report = (plugin: string, kind: HookFailureKind, error: unknown, detached: boolean): void => {
      const onError = this.options.onHookError ?? writeHookErrorToStderr;
      onError({ plugin, hook: 'runInContext', stepId: turn.turnId, tenant: undefined, provider: undefined, model: undefined, kind, error, detached });
    };
    const wrappers = hooks && ContextWrappers.of(hooks, report, DEFAULT_MAX_HOOK_FAILURES);
    const inner = wrappers ? () => wrappers.run(turn, run) : run;
    return runTurn ? runTurn(turn, inner) : inner();
  }

  /** Delivers events to the caller's callback, guarded: failures are reported, never thrown. */
  private emitter(onEvent: AgentRunOptions['onEvent']): (event: AgentEvent) => void {
    if (!onEvent) return () => undefined;
    const report = (error: unknown, kind: 'threw' | 'rejected'): void => {
      (this.options.onHookError ?? writeHookErrorToStderr)({
        plugin: 'agent',
        hook: 'onEvent',
        stepId: '-',
        tenant: undefined,
        provider: undefined,
        model: undefined,
        kind,
        error,
        detached: false,
      });
    };
    return (event) => {
      try {
        const returned = onEvent(event);
        if (isThenable(returned)) Promise.resolve(returned).catch((error: unknown) => report(error, 'rejected'));
      } catch (error) {
        report(error, 'threw');
      }
    };
  }
}

/** Step hooks that forward a step's parts, calls and results as agent events. */
function eventHooks(stepNo: number, emit: (event: AgentEvent) => void): NamedStepHooks {
  return {
    name: 'agent events',
    hooks: {
      onPart: (e) => emit({ type: 'part', step: stepNo, part: e.part }),
      onToolCall: (e) => emit({ type: 'tool_call', step: stepNo, toolCall: e.toolCall }),
      onToolResult: (e) => emit({ type: 'tool_result', step: stepNo, result: e.result }),
      onApprovalRequest: (e) =>
        emit(e.replay === true ? { type: 'approval_request', step: stepNo, toolCall: e.toolCall, index: e.index, replay: true } : { type: 'approval_request', step: stepNo, toolCall: e.toolCall, index: e.index }),
      onApprovalDecision: (e) => emit({ type: 'approval_decision', step: stepNo, toolCall: e.toolCall, index: e.index, decision: e.decision }),
    },
  };
}

/** The generation options of a turn's steps: the run's merged over the agent's; none when neither sets any. */
function turnGeneration(agent: GenerationOptions | undefined, run: GenerationOptions | undefined): GenerationOptions | undefined {
  if (agent === undefined) return run;
  return run === undefined ? agent : mergeGenerationOptions(agent, run);
}

/** Budgets merged field by field: `over`'s win; a field set to `undefined` counts as unset. */
function mergeBudgets(under: TimeoutBudgets, over: TimeoutBudgets): TimeoutBudgets {
  const merged: Record<string, number> = {};
  for (const budgets of [under, over]) {
    for (const [key, value] of Object.entries(budgets)) if (value !== undefined) merged[key] = value as number;
  }
  return merged;
}

/** The budgets a turn gives each of its steps (`turnMs` is the turn's own); none when it has none. */
function stepBudgets(timeouts: TimeoutBudgets | undefined): TimeoutBudgets | undefined {
  if (timeouts === undefined) return undefined;
  const { stepMs, idleMs, toolCallMs } = timeouts;
  if (stepMs === undefined && idleMs === undefined && toolCallMs === undefined) return undefined;
  return {
    ...(stepMs === undefined ? {} : { stepMs }),
    ...(idleMs === undefined ? {} : { idleMs }),
    ...(toolCallMs === undefined ? {} : { toolCallMs }),
  };
}

/** What the model is told after an answer that is not the structured output asked for. */
function outputCorrection(error: StructuredOutputError): Message {
  const text =
    `Your last answer is not the structured output asked for. ${error.message}\n` +
    'Answer again with only the JSON that matches the schema: no other text, no code fence.';
  return { role: 'user', content: [{ type: 'text', text }] };
}

/** A result as a pending step keeps it: `undefined` for a call that waits. */
function settledOnly(result: ToolResult): ToolResult | undefined {
  return result.deferred === true ? undefined : result;
}

function isMessageList(input: Message | readonly Message[]): input is readonly Message[] {
  return Array.isArray(input);
}

/** A step to complete rather than generate: the pending step (with the decisions about its waiting calls), or the ledger's open step. */
interface Resuming {
  readonly key: string;
  readonly pending: PendingStep | undefined;
  readonly decisions: Readonly<Record<string, ApprovalDecision>>;
}

/** The contexts a turn holds in this process (see `Agent.claimed`). */
const HELD = new WeakSet<AgentContext>();

const NO_MESSAGES: readonly Message[] = Object.freeze([]);

/** A turn's identity with its defaults. @throws TypeError for a bad one. */
function turnOf(turn: AgentTurn | undefined): Required<AgentTurn> {
  if (turn === undefined) return { id: randomUUID(), stepsBefore: 0 };
  const { id, stepsBefore } = turn;
  if (id !== undefined && (typeof id !== 'string' || id === '')) throw new TypeError('Agent: turn.id must be a non-empty string');
  if (stepsBefore !== undefined && (!Number.isSafeInteger(stepsBefore) || stepsBefore < 0)) throw new TypeError('Agent: turn.stepsBefore must be a whole number');
  return { id: id ?? randomUUID(), stepsBefore: stepsBefore ?? 0 };
}

/** Checks the decisions of a resume: each names a waiting call and is a decision. @throws NoPendingApprovalError, TypeError. */
function checkDecisions(pending: PendingStep, decisions: Readonly<Record<string, ApprovalDecision>>): void {
  const waiting = pendingApprovals(pending);
  for (const id of Object.keys(decisions)) {
    if (!waiting.some((p) => p.toolCall.id === id)) {
      throw new NoPendingApprovalError(`No call with id "${id}" waits for approval (waiting: ${waiting.map((p) => p.toolCall.id).join(', ')})`);
    }
    if (!isApprovalDecision(decisions[id])) throw new TypeError(`Agent.resume(): the decision for "${id}" is not an approval decision ({ type: 'approve' | 'deny' | 'defer' })`);
  }
}
