import type { Message } from '../message/message.js';
import type { StreamedMessagePart, ToolCall } from '../message/parts.js';
import type { FinishReason } from '../provider/chat-provider.js';
import { mergeGenerationOptions, type GenerationOptions } from '../provider/generation-options.js';
import { addUsage, tokenUsage, type TokenUsage } from '../provider/token-usage.js';
import { isThenable, writeHookErrorToStderr, type HookErrorHandler } from '../runtime/hook-guard.js';
import type { StepResult } from '../runtime/step-result.js';
import type { NamedStepHooks } from '../runtime/step-hooks.js';
import type { ToolResult } from '../tooling/tool-result.js';
import type { AgentContext } from './context.js';
import { LinearContext } from './linear-context.js';
import { abortableDelay } from '../runtime/abort.js';
import { defaultRetryPolicy, isRetryableError, retryDelayMs, type RetryPolicy } from './retry.js';
import { toolResultToMessage } from './tool-message.js';

/** Runs one step: `step()` with a provider and toolset, or a kernel runner's `step`. */
export type StepFunction = (options: {
  readonly systemPrompt: string;
  readonly history: readonly Message[];
  readonly signal?: AbortSignal;
  readonly hooks?: readonly NamedStepHooks[];
  /** Generation options of the step, merged over the provider's own (these win). */
  readonly generation?: GenerationOptions;
}) => Promise<StepResult>;

/** What happens in an agent turn, as it happens. `step` counts from 1 within the turn. */
export type AgentEvent =
  | { readonly type: 'step_start'; readonly step: number; readonly attempt: number }
  | { readonly type: 'part'; readonly step: number; readonly part: StreamedMessagePart }
  | { readonly type: 'tool_call'; readonly step: number; readonly toolCall: ToolCall }
  | { readonly type: 'tool_result'; readonly step: number; readonly result: ToolResult }
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

/** Options of an {@link Agent}. */
export interface AgentOptions {
  readonly systemPrompt: string;
  /** How to run one step. */
  readonly step: StepFunction;
  /** The conversation (a `LinearContext`, or any other {@link AgentContext}); default: a new in-memory `LinearContext`. */
  readonly context?: AgentContext;
  /**
   * Generation options of every step (merged over the provider's own; a turn's
   * {@link AgentRunOptions.generation} is merged over these).
   */
  readonly generation?: GenerationOptions;
  /** Steps per turn at most (default 100). */
  readonly maxSteps?: number;
  /** Retry policy of failed provider calls (merged into {@link defaultRetryPolicy}). */
  readonly retry?: Partial<RetryPolicy>;
  /** Random source for retry jitter (tests pass a fixed one). */
  readonly random?: () => number;
  /** Receives failures of `onEvent` callbacks; default one line on stderr. */
  readonly onHookError?: HookErrorHandler;
  /** Told before each retry wait, with the id of the failed attempt (`kernel.agent()` passes it to the hooks' `onRetry`). */
  readonly onRetry?: (retry: AgentRetry) => void;
}

/** A retry the loop is about to wait for. */
export interface AgentRetry {
  /** The id of the attempt that failed. */
  readonly stepId: string;
  readonly step: number;
  readonly attempt: number;
  readonly nextAttempt: number;
  readonly delayMs: number;
  readonly error: unknown;
}

/** Options of one {@link Agent.run}. */
export interface AgentRunOptions {
  /** Aborts the running step (tools included) or the retry wait; nothing of the step is saved. */
  readonly signal?: AbortSignal;
  /** Every event of the turn. Guarded: a failure is reported and never changes the turn. */
  readonly onEvent?: (event: AgentEvent) => void | Promise<void>;
  /** Extra hooks for every step of the turn. */
  readonly hooks?: readonly NamedStepHooks[];
  /** Generation options of every step of this turn, merged over the agent's (these win, field by field). */
  readonly generation?: GenerationOptions;
}

/** Why a turn ended. */
export type AgentStopReason = 'no_tool_calls' | 'max_steps';

/** The outcome of one turn. */
export interface AgentTurnResult {
  /** The last assistant message. */
  readonly message: Message;
  readonly steps: number;
  /** Usage summed over the turn's successful steps. */
  readonly usage: TokenUsage;
  readonly stopReason: AgentStopReason;
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

  constructor(private readonly options: AgentOptions) {
    this.context = options.context ?? new LinearContext();
    this.policy = { ...defaultRetryPolicy, ...options.retry };
  }

  /**
   * Runs one turn: adds `input` (a user message, or messages) to the context, then steps.
   *
   * @throws the last error when a step fails for good (not retryable, or out of attempts), or the
   * abort reason; the context then holds everything up to the last complete step.
   */
  async run(input: string | Message | readonly Message[], runOptions: AgentRunOptions = {}): Promise<AgentTurnResult> {
    const { signal } = runOptions;
    signal?.throwIfAborted();
    const emit = this.emitter(runOptions.onEvent);
    const inputs: readonly Message[] =
      typeof input === 'string' ? [{ role: 'user', content: [{ type: 'text', text: input }] }] : isMessageList(input) ? input : [input];
    await this.context.append(...inputs);

    const maxSteps = this.options.maxSteps ?? 100;
    let usage = tokenUsage();
    for (let stepNo = 1; ; stepNo++) {
      const { result, toolResults } = await this.stepWithRetries(stepNo, runOptions, emit);
      await this.context.append(result.message, ...toolResults.map(toolResultToMessage));
      if (result.usage) usage = addUsage(usage, result.usage);
      emit({ type: 'step_end', step: stepNo, message: result.message, toolResults, usage: result.usage, finishReason: result.finishReason });
      if (result.toolCalls.length === 0) return { message: result.message, steps: stepNo, usage, stopReason: 'no_tool_calls' };
      if (stepNo >= maxSteps) return { message: result.message, steps: stepNo, usage, stopReason: 'max_steps' };
    }
  }

  private async stepWithRetries(
    stepNo: number,
    runOptions: AgentRunOptions,
    emit: (event: AgentEvent) => void,
  ): Promise<{ result: StepResult; toolResults: readonly ToolResult[] }> {
    const { signal } = runOptions;
    let attemptStepId = '';
    const hooks: NamedStepHooks[] = [
      { name: 'agent', hooks: { onStepStart: (e) => void (attemptStepId = e.stepId) } },
      ...(runOptions.hooks ?? []),
    ];
    if (runOptions.onEvent) hooks.push(eventHooks(stepNo, emit));
    const generation = turnGeneration(this.options.generation, runOptions.generation);
    for (let attempt = 1; ; attempt++) {
      emit({ type: 'step_start', step: stepNo, attempt });
      try {
        const result = await this.options.step({
          systemPrompt: this.options.systemPrompt,
          history: this.context.history.slice(),
          ...(signal ? { signal } : {}),
          ...(generation ? { generation } : {}),
          hooks,
        });
        return { result, toolResults: await result.toolResults() };
      } catch (error) {
        if (signal?.aborted || !isRetryableError(error) || attempt >= this.policy.maxAttempts) throw error;
        const delayMs = retryDelayMs(this.policy, attempt, error, this.options.random);
        emit({ type: 'retry', step: stepNo, attempt, nextAttempt: attempt + 1, delayMs, error });
        try {
          this.options.onRetry?.({ stepId: attemptStepId, step: stepNo, attempt, nextAttempt: attempt + 1, delayMs, error });
        } catch {
          // a notification; the kernel's delivers to guarded hooks
        }
        await abortableDelay(delayMs, signal);
      }
    }
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
    },
  };
}

/** The generation options of a turn's steps: the run's merged over the agent's; none when neither sets any. */
function turnGeneration(agent: GenerationOptions | undefined, run: GenerationOptions | undefined): GenerationOptions | undefined {
  if (agent === undefined) return run;
  return run === undefined ? agent : mergeGenerationOptions(agent, run);
}

function isMessageList(input: Message | readonly Message[]): input is readonly Message[] {
  return Array.isArray(input);
}
