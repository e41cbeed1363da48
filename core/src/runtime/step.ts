import type { Message } from '../message/message.js';
import type { ContentPart, StreamedMessagePart, ToolCall } from '../message/parts.js';
import type { ChatProvider, FinishReason, ProviderSwitch } from '../provider/chat-provider.js';
import type { GenerationOptions } from '../provider/generation-options.js';
import type { OutputFormat } from '../provider/output-format.js';
import type { Tool } from '../tooling/tool.js';
import type { InferOutput, OutputOption } from '../output/output-schema.js';
import { parseOutput } from '../output/parse-output.js';
import { resolveOutput, type ResolvedOutput } from '../output/resolve-output.js';
import { isApprovalDecision, type ApprovalCallback, type ApprovalDecision } from '../tooling/approval.js';
import { replayPolicyOf } from '../tooling/replay-policy.js';
import { toolInterrupted, toolNotExecuted } from '../tooling/tool-errors.js';
import type { ToolResult, ToolReturnValue } from '../tooling/tool-result.js';
import type { Toolset } from '../tooling/toolset.js';
import { ApprovalGate, type GateEntry } from './approval-gate.js';
import { ContextWrappers } from './hooks/context-wrappers.js';
import { DEFAULT_CLEANUP_TIMEOUT_MS, DEFAULT_MAX_HOOK_FAILURES } from './defaults.js';
import { HookBus, type HookBusEntry } from './hooks/hook-bus.js';
import { HookGuard, type HookErrorHandler } from './hooks/hook-guard.js';
import type { NamedStepHooks, RequestScope, StepEventContext, ToolScope } from './hooks/step-hooks.js';
import { randomUUID } from '../random-uuid.js';
import { StepResult, type StepRun } from './step-result.js';
import { streamMessage, streamMessageThen, type GenerateResult, type StreamEnd, type StreamMessageInput, type StreamObserver } from './stream-message.js';
import type { StepLedger } from './step-ledger.js';
import { CallBudgets, ToolRuns, type ToolRunListener } from './tool-runs.js';
import { checkTimeoutBudgets, hasStepDeadline, StepDeadline, type IdleWatch, type TimeoutBudgets } from './timeout-budgets.js';

/**
 * When tool calls run.
 *
 * - `streaming` (default): each call is handed to the toolset as soon as it is complete, while the
 *   model is still streaming. If the stream ends with finish reason `length` or `content_filter`, the
 *   last call (completed only by the end of the stream, so possibly cut off) is not run: it gets an
 *   error result saying so. Calls completed earlier were whole requests and run to completion.
 * - `deferred`: no call runs until the stream has ended with a clean finish reason (anything but
 *   `length` and `content_filter`); after an unclean finish, every call gets a "not executed" error
 *   result. Safer, slower: tools start only after the last token.
 */
export type ToolDispatchMode = 'streaming' | 'deferred';

/**
 * A step to complete instead of generating a new one: the step whose calls waited for approval
 * (`Agent.resume` builds it from the context's pending step). The provider is not called; the
 * message is the step's message; calls that ran before keep their results (they do not run again);
 * the waiting ones get their decisions (an approved call runs now, a denied one gets the denial, and
 * one without a decision is asked of the approval handler again, which may defer it again).
 */
export interface StepResumption {
  /** The assistant message of the step; its tool calls are the step's calls. */
  readonly message: Message;
  /**
   * Index-aligned with the message's tool calls: the result of each call that settled before, and
   * `undefined` (or a deferred result) for each call still waiting for approval.
   */
  readonly results: readonly (ToolResult | undefined)[];
  /** Index-aligned too: the decision for a waiting call (ignored for calls that have a result). */
  readonly decisions?: readonly (ApprovalDecision | undefined)[];
  /**
   * Index-aligned too: how a call with neither a result nor a decision comes to the approval gate.
   * `'ask'` (the default): it waited for approval, the handler is asked; `'check'`: it never came
   * to the gate (a step redone from the call ledger), so it runs as in a new step (the toolset's
   * `needsApproval` decides); `'interrupted'`: it started before and its outcome was never recorded
   * (it may have run), so its tool's replay policy decides: `'never'` gives the model the
   * interrupted error result, `'safe'` runs it again, `'ask'` asks the handler with `replay: true`
   * (or takes the call's decision, when one is given).
   */
  readonly entries?: readonly ('ask' | 'check' | 'interrupted' | undefined)[];
  /** The provider's id of the message, for the step's result and events. */
  readonly messageId?: string | undefined;
  /** The finish reason of the response, for the step's result and events. */
  readonly finishReason?: FinishReason | undefined;
}

/**
 * Options of {@link step}: the one declaration of the step options. Every layer above takes its
 * options from here and documents only what it adds: `StepRunner.step` (`RunnerStepOptions`: these
 * less what the kernel resolves), the agent's step function (`StepFunction`: what the agent hands
 * each step), a turn (`AgentRunOptions`), an agent (`AgentOptions`) and a queued turn
 * (`TurnOptions` of `@kosong/bullmq`).
 *
 * The callbacks `onPart`, `onToolCall` and `onToolResult` are the hooks of the same names (see
 * `StepHooks`) given as plain functions of the event's payload, delivered before the hooks, through
 * the same guard, under one rule: `onPart` is awaited (the stream waits for it), `onToolCall` and
 * `onToolResult` are not (neither the stream nor the tools wait; the step's cleanup does). A
 * callback's failure is reported to `onHookError` as owner `options` (e.g. `options.onPart`).
 *
 * @typeParam TContext - the type of the run's {@link StepOptions.context} value.
 * @typeParam S - the structured output's schema, when one is asked for.
 */
export interface StepOptions<TContext = unknown, S extends OutputOption | undefined = OutputOption | undefined> {
  /** The model the step asks: its `generate` streams the response. */
  readonly provider: ChatProvider;
  /** The system prompt of the request. */
  readonly systemPrompt: string;
  /** The tools offered to the model, and what runs the calls it makes. */
  readonly toolset: Toolset<TContext>;
  /** The conversation so far. Never modified. */
  readonly history: readonly Message[];
  /**
   * Aborting stops the stream, aborts every running tool through its signal and rejects the step
   * (or, after it returned, `toolResults()`) with the signal's reason once the tools are reclaimed.
   */
  readonly signal?: AbortSignal;
  /**
   * Generation options of this step, merged over the provider's own (`provider.generation`) field by
   * field: these win. A bad value, or an option the provider cannot honour, fails the step with an
   * `InvalidGenerationOptionError` / `UnsupportedGenerationOptionError` (not retryable).
   */
  readonly generation?: GenerationOptions;
  /**
   * Each streamed part, before merging; the part is frozen. Awaited, like the `onPart` hook: the
   * stream waits for it (back-pressure), up to `hookTimeoutMs`.
   */
  readonly onPart?: (part: StreamedMessagePart) => void | Promise<void>;
  /**
   * The former name of {@link StepOptions.onPart}, still honoured (its failures are reported as
   * `options.onMessagePart`).
   *
   * @deprecated Use `onPart`. Giving both is a `TypeError`: the step does not start.
   */
  readonly onMessagePart?: (part: StreamedMessagePart) => void | Promise<void>;
  /**
   * Each complete tool call, before the toolset is handed it (also a call that is not run: the
   * `onToolCall` hook's `executed` says which). Not awaited, like the hook: neither the stream nor
   * the tool waits for it; the step's cleanup does (so `toolResults()` resolves after it), up to
   * `hookTimeoutMs`.
   */
  readonly onToolCall?: (toolCall: ToolCall) => void | Promise<void>;
  /** Each tool result, in completion order. Not awaited, like the `onToolResult` hook (as `onToolCall`). */
  readonly onToolResult?: (result: ToolResult) => void | Promise<void>;
  /** Lifecycle hooks of named owners (plugins), delivered after the callbacks above, in order. */
  readonly hooks?: readonly NamedStepHooks[];
  /** Receives every callback and hook failure; default: one line on stderr. */
  readonly onHookError?: HookErrorHandler;
  /** Tenant id carried in every event and hook-error report. */
  readonly tenant?: string;
  /** Id of the step in events and reports; default: a random UUID. */
  readonly stepId?: string;
  /** When tool calls run; default `streaming`. */
  readonly dispatch?: ToolDispatchMode;
  /** How long an async hook may take before it is reported and no longer awaited; default 5 s. */
  readonly hookTimeoutMs?: number;
  /** How long aborted tools get to settle before they are reported as leaked; default 5 s. */
  readonly cleanupTimeoutMs?: number;
  /**
   * Timeout budgets, in ms (see {@link TimeoutBudgets}): `stepMs` for the whole step, `idleMs` for
   * the provider's silence before and between parts, `toolCallMs` for each tool call, and, for an
   * agent and its turns only, `turnMs` for a whole `run` or `resume` (a step refuses it). One that
   * runs out is a {@link TimeoutBudgetError} naming it: a step (`stepMs`, `idleMs`) or a turn ends as
   * if its signal aborted with that error, every running tool aborted and reclaimed; a tool call
   * gets an error result naming its budget, and the step goes on. An agent gives its budgets to
   * every step of every turn, a turn's merged over the agent's field by field. A bad value (an
   * unknown budget, a value that is not a positive number of ms) is a `TypeError`: nothing starts.
   * None: no limits, and nothing is timed.
   */
  readonly timeouts?: TimeoutBudgets;
  /**
   * Decides about calls that need approval (the toolset's `needsApproval` says which): approve,
   * deny or defer. Guarded: a throw, a rejection, a value that is no decision, or no decision
   * within `approvalTimeoutMs` is reported to `onHookError` (as `options.onApproval`) and denies
   * the call. Without a handler, such calls are deferred: their results are marked `deferred`.
   */
  readonly onApproval?: ApprovalCallback;
  /** How long a call may wait for the approval handler's decision before it is denied; default: no limit. */
  readonly approvalTimeoutMs?: number;
  /** Completes a step whose calls waited for approval instead of generating one (see {@link StepResumption}). */
  readonly resume?: StepResumption;
  /**
   * Where the step records the start of each call (durably, before the toolset is called) and its
   * outcome, and where each call's `ToolContext.idempotencyKey` comes from (see {@link StepLedger}).
   * `Agent` passes one per step over its context's call ledger; none: nothing is recorded.
   */
  readonly ledger?: StepLedger;
  /**
   * A value of the caller's for this run — the user, their auth, a database handle — handed to
   * every tool call (`ToolContext.context`) and carried by every hook event (`event.context`).
   * The runtime never reads it.
   */
  readonly context?: TContext;
  /**
   * Structured output: a zod 4 schema, a JSON Schema, or `structuredOutput(schema, { name,
   * description })`. The provider is asked for JSON matching it (with its native feature); when the
   * model answers without tool calls, its text is parsed and validated into `result.output` (typed
   * from a zod schema, transforms applied). The step fails with an `InvalidOutputSchemaError` for a
   * schema that cannot be used, an `UnsupportedOutputError` from a provider that cannot ask for it,
   * and a `StructuredOutputError` (the text, the issues, the model's message) when the answer is not
   * such JSON — after its start, end and cleanup events, like any failure.
   */
  readonly output?: S;
}

/**
 * Runs one agent step: streams one response, merges it into one assistant message, and hands every
 * complete tool call to the toolset while the stream is still running.
 *
 * On every exit path no tool work is left running: if the provider fails, the signal aborts, or
 * anything else is thrown, every running tool is aborted through its signal and awaited (up to
 * `cleanupTimeoutMs`; tools still running then are reported as leaked in the cleanup event), and
 * then the original error is re-thrown. On success, {@link StepResult.toolResults} gives the results
 * in call order.
 *
 * @throws the provider's error, the signal's reason, a {@link TimeoutBudgetError} when the step's
 * `stepMs` or `idleMs` budget ran out, or {@link APIEmptyResponseError}; a `TypeError`, before
 * anything runs, for `onPart` given with its deprecated alias `onMessagePart`, or for bad `timeouts`.
 */
export function step<TContext = unknown, S extends OutputOption | undefined = undefined>(options: StepOptions<TContext, S>): Promise<StepResult<InferOutput<S>>> {
  if (options.onPart !== undefined && options.onMessagePart !== undefined) return Promise.reject(new TypeError(BOTH_PART_CALLBACKS));
  if (options.timeouts !== undefined) {
    try {
      checkTimeoutBudgets('step()', options.timeouts, false);
    } catch (error) {
      return Promise.reject(error);
    }
  }
  const execution = new StepExecution(options as StepOptions);
  const spec = options.output;
  if (spec === undefined) return execution.run(undefined) as Promise<StepResult<InferOutput<S>>>;
  return resolveOutput(spec).then(
    (output) => execution.run(output),
    (error: unknown) => execution.run(undefined, error),
  ) as Promise<StepResult<InferOutput<S>>>;
}

const BOTH_PART_CALLBACKS = 'step(): both onPart and onMessagePart are given; onMessagePart is the deprecated name of onPart: give onPart only';

const RESOLVED: Promise<void> = Promise.resolve();

const UNCLEAN_FINISH: ReadonlySet<FinishReason | undefined> = new Set<FinishReason | undefined>(['length', 'content_filter']);

/**
 * One execution of {@link step}: owns the tool runs, the hook bus and the cleanup.
 *
 * Kept small, since thousands of steps may be in flight at once: the step is itself the input, the
 * observer and the end of its stream, the listener of its tool runs and of its signal (getters and
 * methods, not objects and closures of their own), and what only hooks need (the event context, the
 * start time) exists only when the step has hooks.
 */
class StepExecution implements StepRun, StreamMessageInput, StreamObserver, StreamEnd<StepResult>, ToolRunListener {
  readonly stepId: string;
  readonly runs: ToolRuns;
  private readonly bus: HookBus;
  /** The correlation ids of the step's events and scopes (built only when the step has hooks). */
  private readonly eventContext: StepEventContext | undefined;
  /** The hooks' `runInContext` wrappers; `undefined` when none has one. */
  private readonly wrappers: ContextWrappers | undefined;
  /** Calls held back until the stream ends (`dispatch: 'deferred'`). */
  private deferredCalls: ToolCall[] | undefined;
  /** The message's content so far, for the ledger (the stream's growing list, or a resumed message's). */
  private content: readonly ContentPart[] | undefined;
  /** When the step started, for its end event (`undefined` when the step has no hooks). */
  private readonly startedAt: number | undefined;
  private finished: Promise<void> | undefined;
  /** The structured output asked for, if any (set by {@link StepExecution.run}). */
  private resolvedOutput: ResolvedOutput | undefined;
  /** Delivers each streamed part to the hooks (`undefined` when none wants parts: the stream loop skips it). */
  readonly onPart: ((part: StreamedMessagePart) => Promise<void> | undefined) | undefined;

  constructor(private readonly options: StepOptions) {
    this.stepId = options.stepId ?? randomUUID();
    const entries = busEntries(options);
    const needsGate = ApprovalGate.needed(options.toolset, options.resume !== undefined);
    // A step without hooks has no guard, unless an approval handler's failures need reporting.
    const guard = entries.length > 0 || needsGate ? HookGuard.forStep(this.stepId, options) : undefined;
    const { tenant, provider, context } = options;
    const eventContext = (this.eventContext =
      entries.length === 0 ? undefined : { stepId: this.stepId, tenant, provider: provider.name, model: provider.modelName, context });
    const bus = (this.bus = eventContext === undefined ? SILENT_BUS : new HookBus(guard, entries, eventContext));
    this.startedAt = eventContext === undefined ? undefined : performance.now();
    this.onPart = bus.wantsParts ? (part) => bus.part(part) : undefined;
    this.wrappers =
      guard &&
      ContextWrappers.of(entries, (plugin, kind, error, detached) => guard.reportFailure(plugin, 'runInContext', kind, error, detached), DEFAULT_MAX_HOOK_FAILURES);
    const gate = needsGate
      ? new ApprovalGate({
          toolset: options.toolset,
          onApproval: options.onApproval,
          timeoutMs: options.approvalTimeoutMs,
          tenant: options.tenant,
          bus,
          reportFailure: (kind, error) => guard!.reportFailure('options', 'onApproval', kind, error),
        })
      : undefined;
    const ledger = options.ledger;
    const { timeouts } = options;
    const settings =
      context === undefined && this.wrappers === undefined && ledger === undefined && timeouts === undefined
        ? undefined
        : {
            context,
            inScope: this.wrappers && (<T>(call: ToolCall, index: number, run: () => T) => this.inToolScope(call, index, run)),
            ledger,
            content: ledger && ((): readonly ContentPart[] => this.content ?? NO_CONTENT),
            callBudgets: timeouts?.toolCallMs === undefined ? undefined : new CallBudgets(timeouts.toolCallMs, options.cleanupTimeoutMs ?? DEFAULT_CLEANUP_TIMEOUT_MS),
            // Made last: once its timers run, every exit of the step (failed, or its cleanup) stops them.
            deadline: hasStepDeadline(timeouts) ? new StepDeadline(this.stepId, timeouts, options.signal) : undefined,
          };
    this.runs = new ToolRuns(options.toolset, this.stepId, bus.listens('onToolResult') ? this : undefined, gate, settings);
    this.signal?.addEventListener('abort', this, { once: true });
  }

  /**
   * The step's signal aborted (the step is the signal's listener object) — the caller's, or one of
   * its budgets ran out: cancels the tools (the stream rejects by itself).
   */
  handleEvent(): void {
    this.runs.cancel(this.signal!.reason);
  }

  /**
   * Runs the step: the start event, the stream, then {@link StepExecution.done} or
   * {@link StepExecution.failed}. No `async` function: a suspended async function keeps its whole
   * frame for the length of the stream, and thousands of steps may stream at once.
   */
  run(output: ResolvedOutput | undefined, outputError?: unknown): Promise<StepResult> {
    this.resolvedOutput = output;
    let started: Promise<void> | undefined;
    // The start event's request is built only when a hook listens for it.
    if (this.bus.listens('onStepStart')) {
      try {
        const { options } = this;
        started = this.bus.stepStart({
          systemPrompt: options.systemPrompt,
          tools: options.toolset.tools,
          history: options.history,
          providerGeneration: options.provider.generation,
          stepGeneration: options.generation,
          output: output?.format,
        });
      } catch (error) {
        return this.failed(error);
      }
    }
    // A schema that could not be used fails the step right after its start event.
    if (started === undefined) return outputError === undefined ? this.generate() : this.failed(outputError);
    return started.then(
      () => (outputError === undefined ? this.generate() : this.failed(outputError)),
      (error: unknown) => this.failed(error),
    );
  }

  /** Streams the response (or completes the resumed step), then ends the step. */
  private generate(): Promise<StepResult> {
    try {
      const { options } = this;
      if (options.resume) {
        return this.resumed(options.resume).then(
          (generated) => this.done(generated),
          (error: unknown) => this.failed(error),
        );
      }
      this.deadline?.streaming();
      // The usual path: the stream loop ends the step itself (one promise per step while it streams).
      if (this.wrappers === undefined) return streamMessageThen(this, this, this);
      // The hooks' contexts hold the request, not the step's end (its events run outside them, as without wrappers).
      return this.inRequestScope(() => streamMessage(this, this)).then(
        (generated) => this.done(generated),
        (error: unknown) => this.failed(error),
      );
    } catch (error) {
      return this.failed(error);
    }
  }

  // The input of the stream (see StreamMessageInput), read from the options when the request is made.

  get provider(): ChatProvider {
    return this.options.provider;
  }

  get systemPrompt(): string {
    return this.options.systemPrompt;
  }

  get tools(): readonly Tool[] {
    return this.options.toolset.tools;
  }

  get history(): readonly Message[] {
    return this.options.history;
  }

  /** The caller's signal, or, for a step with `stepMs` / `idleMs` budgets, the signal those abort too. */
  get signal(): AbortSignal | undefined {
    const deadline = this.runs.deadline;
    return deadline === undefined ? this.options.signal : deadline.signal;
  }

  /** What the stream loop tells the idle budget (only for a step with `idleMs`). */
  get idleWatch(): IdleWatch | undefined {
    return this.runs.deadline?.idle;
  }

  /** The step's `stepMs` / `idleMs` budgets (only for a step with such budgets; kept by its tool runs' settings). */
  private get deadline(): StepDeadline | undefined {
    return this.runs.deadline;
  }

  get generation(): GenerationOptions | undefined {
    return this.options.generation;
  }

  get output(): OutputFormat | undefined {
    return this.resolvedOutput?.format;
  }

  /** Given to the provider only when a hook listens for `onProviderSwitch`. */
  get onProviderSwitch(): ((change: ProviderSwitch) => void) | undefined {
    if (!this.bus.listens('onProviderSwitch')) return undefined;
    return (change) => {
      try {
        this.bus.providerSwitch(change);
      } catch {
        // a malformed notice from the provider: nothing to deliver, and the provider must not fail for it
      }
    };
  }

  /** A complete tool call (see {@link StreamObserver.onToolCall}): dispatched, held back or withheld. */
  onToolCall(call: ToolCall, atEnd: { readonly finishReason: FinishReason | undefined } | undefined, content: readonly ContentPart[]): void {
    this.content = content;
    if (this.options.dispatch === 'deferred') {
      (this.deferredCalls ??= []).push(call);
    } else if (atEnd !== undefined && UNCLEAN_FINISH.has(atEnd.finishReason)) {
      this.dispatch(call, toolNotExecuted(`the response was cut off (finish reason "${atEnd.finishReason}") before this call was complete`));
    } else {
      this.dispatch(call, undefined);
    }
  }

  /** A call settled (see {@link ToolRunListener}): the `onToolResult` event. */
  toolSettled(index: number, call: ToolCall, result: ToolResult, durationMs: number): void {
    this.bus.toolResult(call, index, result, durationMs);
  }

  /** The stream ended: parses the structured output, if one was asked for, then completes the step. */
  done(generated: GenerateResult): Promise<StepResult> | StepResult {
    this.deadline?.streamEnded();
    const output = this.resolvedOutput;
    if (output === undefined) return this.complete(generated);
    return withOutput(output, generated).then(
      (parsed) => this.complete(parsed),
      (error: unknown) => this.failed(error),
    );
  }

  /** Runs the provider call inside the hooks' contexts (see `StepHooks.runInContext`). */
  private inRequestScope<T>(run: () => T): T {
    const { wrappers, eventContext } = this;
    if (wrappers === undefined || eventContext === undefined) return run();
    const { stepId, tenant, provider, model, context } = eventContext;
    const scope: RequestScope = Object.freeze({ stepId, tenant, provider, model, context, kind: 'request' });
    return wrappers.run(scope, run);
  }

  /** Runs one tool call inside the hooks' contexts (only called when there are wrappers). */
  private inToolScope<T>(toolCall: ToolCall, index: number, run: () => T): T {
    const { stepId, tenant, provider, model, context } = this.eventContext!;
    const scope: ToolScope = Object.freeze({ stepId, tenant, provider, model, context, kind: 'tool', toolCall, toolCallId: toolCall.id, index });
    return this.wrappers!.run(scope, run);
  }

  /** The stream ended: runs deferred calls, delivers the end event, and returns the result. */
  private complete(generated: GenerateResult): Promise<StepResult> | StepResult {
    const { bus } = this;
    if (this.deferredCalls !== undefined) {
      const withheld = UNCLEAN_FINISH.has(generated.finishReason)
        ? toolNotExecuted(`the response ended with finish reason "${generated.finishReason}"`)
        : undefined;
      for (const call of this.deferredCalls) this.dispatch(call, withheld);
    }
    if (!bus.listens('onStepEnd')) return this.result(generated);
    const { message, id: messageId, usage, finishReason } = generated;
    const ending = { message, messageId, usage, finishReason, error: undefined, aborted: false };
    const ended = bus.stepEnd(ending, this.runs.calls, performance.now() - this.startedAt!);
    return ended === undefined ? this.result(generated) : ended.then(() => this.result(generated));
  }

  /**
   * The step's result, once its cleanup is done when no call is running (else the cleanup follows
   * the calls). Not an `async` function: most steps end with nothing left to wait for.
   */
  private result(generated: GenerateResult): Promise<StepResult> | StepResult {
    const result = new StepResult(this, generated);
    if (this.runs.running > 0) {
      void this.runs.settledOrCancelled().then((cancellation) => this.finish(cancellation?.reason));
      return result;
    }
    const finished = this.finish(undefined);
    return finished === RESOLVED ? result : finished.then(() => result);
  }

  /** The step failed: cancels the tools, delivers the end event, reclaims, and re-throws `error`. */
  async failed(error: unknown): Promise<never> {
    const { bus } = this;
    this.deadline?.stop();
    this.runs.cancel(error);
    if (bus.listens('onStepEnd')) {
      const aborted = this.signal?.aborted === true;
      const ending = { message: undefined, messageId: undefined, usage: undefined, finishReason: undefined, error, aborted };
      await bus.stepEnd(ending, this.runs.calls, performance.now() - this.startedAt!);
    }
    await this.finish(error);
    throw error;
  }

  /** Resolves when every call has settled (`undefined`) or the calls were cancelled (the reason). */
  settled(): Promise<{ readonly reason: unknown } | undefined> {
    return this.runs.settledOrCancelled();
  }

  /** Aborts running tools, waits for them (up to the deadline), then delivers the cleanup event. Once. */
  finish(reason: unknown): Promise<void> {
    this.finished ??= this.reclaimAndCleanUp(reason);
    return this.finished;
  }

  cancel(reason: unknown): Promise<void> {
    this.runs.cancel(reason);
    return this.finish(reason);
  }

  private reclaimAndCleanUp(reason: unknown): Promise<void> {
    // Most steps end with nothing running and nobody listening: then this is done at once.
    if (this.runs.running === 0) return this.cleanUp(this.runs.abandoned) ?? RESOLVED;
    return this.runs.reclaim(reason, this.options.cleanupTimeoutMs ?? DEFAULT_CLEANUP_TIMEOUT_MS).then((leaked) => this.cleanUp(leaked));
  }

  private cleanUp(leaked: readonly ToolCall[]): Promise<void> | undefined {
    this.signal?.removeEventListener('abort', this);
    this.deadline?.stop();
    return this.bus.cleanup(leaked, this.runs.cancellation !== undefined);
  }

  private dispatch(call: ToolCall, withheld: ToolReturnValue | undefined, entry?: GateEntry): void {
    const executed = withheld === undefined && !this.runs.cancelled && !this.signal?.aborted;
    // Observers hear of the call before the toolset runs it (a telemetry span can then start first).
    this.bus.toolCall(call, this.runs.calls.length, executed);
    if (executed) this.runs.dispatch(call, entry);
    else this.runs.skip(call, withheld ?? toolNotExecuted('the step was cancelled'));
  }

  /**
   * The step's message when it completes a step that waited for approval: the calls that settled
   * before keep their results (observers heard of them then), the waiting ones go to the gate.
   */
  private resumed(resume: StepResumption): Promise<GenerateResult> {
    try {
      return Promise.resolve(this.resume(resume));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private resume(resume: StepResumption): GenerateResult {
    const { message, results, decisions } = resume;
    const calls = message.toolCalls ?? [];
    if (message.role !== 'assistant' || results.length !== calls.length || (decisions !== undefined && decisions.length !== calls.length)) {
      throw new TypeError("step({ resume }): the message must be the assistant's, with results (and decisions) aligned with its tool calls");
    }
    const bad = decisions?.findIndex((decision) => decision !== undefined && !isApprovalDecision(decision)) ?? -1;
    if (bad >= 0) throw new TypeError(`step({ resume }): decision ${bad} is not an approval decision`);
    const { entries } = resume;
    if (entries !== undefined && (entries.length !== calls.length || entries.some((entry) => entry !== undefined && !ENTRIES.has(entry)))) {
      throw new TypeError("step({ resume }): entries must be aligned with the message's tool calls, each 'ask', 'check', 'interrupted' or undefined");
    }
    this.content = message.content;
    calls.forEach((call, index) => {
      const known = results[index];
      if (known !== undefined && known.deferred !== true) {
        this.runs.adopt(call, known);
        return;
      }
      const decision = decisions?.[index];
      const how = entries?.[index];
      if (how === 'interrupted') {
        const policy = replayPolicyOf(this.options.toolset, call);
        if (policy === 'never') this.dispatch(call, toolInterrupted());
        else if (policy === 'safe') this.dispatch(call, undefined, RUN);
        else this.dispatch(call, undefined, decision === undefined ? REPLAY : { type: 'decided', decision });
        return;
      }
      this.dispatch(call, undefined, decision !== undefined ? { type: 'decided', decision } : how === 'check' ? undefined : ASK);
    });
    return { id: resume.messageId, message, usage: undefined, finishReason: resume.finishReason, traceId: undefined };
  }
}

const ASK: GateEntry = Object.freeze({ type: 'ask' });
const REPLAY: GateEntry = Object.freeze({ type: 'ask', replay: true });
const RUN: GateEntry = Object.freeze({ type: 'run' });
const ENTRIES: ReadonlySet<string> = new Set(['ask', 'check', 'interrupted']);
const NO_CONTENT: readonly ContentPart[] = Object.freeze([]);

/** The generation with its structured output parsed, when it answered without tool calls (else as it is). */
async function withOutput(output: ResolvedOutput, generated: GenerateResult): Promise<GenerateResult> {
  if ((generated.message.toolCalls?.length ?? 0) > 0) return generated;
  return { ...generated, output: await parseOutput(output, generated) };
}

/** The bus of every step without hooks: it delivers nothing, so one serves them all. */
const SILENT_BUS = new HookBus(undefined, [], { stepId: '', tenant: undefined, provider: '', model: '' });

/**
 * The callbacks and hooks of a step as the bus takes them (a shared empty list when there are none):
 * the callbacks are the first owner's hooks (`options`), under the names they were given.
 */
function busEntries(options: StepOptions): readonly HookBusEntry[] {
  const { onToolCall, onToolResult, onMessagePart } = options;
  const onPart = options.onPart ?? onMessagePart;
  if (!onPart && !onToolCall && !onToolResult) return options.hooks ?? NO_ENTRIES;
  const entries: HookBusEntry[] = [
    {
      name: 'options',
      ...(options.onPart === undefined && onMessagePart !== undefined && { labels: DEPRECATED_PART_LABEL }),
      hooks: {
        ...(onPart && { onPart: (event) => onPart(event.part) }),
        ...(onToolCall && { onToolCall: (event) => onToolCall(event.toolCall) }),
        ...(onToolResult && { onToolResult: (event) => onToolResult(event.result) }),
      },
    },
  ];
  if (options.hooks) entries.push(...options.hooks);
  return entries;
}

/** The report label of a part callback given under its deprecated name. */
const DEPRECATED_PART_LABEL: NonNullable<HookBusEntry['labels']> = Object.freeze({ onPart: 'onMessagePart' });

const NO_ENTRIES: readonly HookBusEntry[] = Object.freeze([]);
