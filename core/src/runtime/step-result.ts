import type { Message } from '../message/message.js';
import type { ToolCall } from '../message/parts.js';
import type { FinishReason } from '../provider/chat-provider.js';
import type { TokenUsage } from '../provider/token-usage.js';
import type { ToolResult } from '../tooling/tool-result.js';
import type { GenerateResult } from './stream-message.js';
import type { ToolRuns } from './tool-runs.js';

/** What a {@link StepResult} needs of the step that made it. @internal */
export interface StepRun {
  readonly stepId: string;
  readonly runs: ToolRuns;
  /** Resolves when every call settled (`undefined`) or the calls were cancelled (with the reason). */
  settled(): Promise<{ readonly reason: unknown } | undefined>;
  /** Reclaims the tools and delivers the cleanup event; once. */
  finish(reason: unknown): Promise<void>;
  /** Aborts running tools and finishes. */
  cancel(reason: unknown): Promise<void>;
}

/**
 * The outcome of one step: the assistant message, and the tool calls it made, which may still be
 * running when the step returns.
 *
 * @typeParam TOutput - the type of the structured output, when one was asked for.
 */
export class StepResult<TOutput = unknown> {
  /** Unique id of this step (the one in every hook event). */
  readonly stepId: string;
  /** The provider's id of the message. */
  readonly id: string | undefined;
  /** The merged assistant message. */
  readonly message: Message;
  readonly usage: TokenUsage | undefined;
  readonly finishReason: FinishReason | undefined;
  readonly traceId: string | undefined;
  /** The tool calls, in the order the model made them (index-aligned with `toolResults()`). */
  readonly toolCalls: readonly ToolCall[];
  /**
   * The structured output (see the step's `output` option), parsed and validated: set when one was
   * asked for and the model answered without tool calls; `undefined` otherwise.
   */
  readonly output: TOutput | undefined;

  readonly #run: StepRun;
  #results: Promise<readonly ToolResult[]> | undefined;

  /** @internal Created by `step`. */
  constructor(run: StepRun, generated: GenerateResult) {
    this.#run = run;
    this.stepId = run.stepId;
    this.id = generated.id;
    this.message = generated.message;
    this.usage = generated.usage;
    this.finishReason = generated.finishReason;
    this.traceId = generated.traceId;
    this.toolCalls = generated.message.toolCalls ?? [];
    this.output = generated.output as TOutput | undefined;
  }

  /**
   * Every tool result, in call order (aligned with {@link StepResult.toolCalls} by index, so
   * duplicate call ids cannot collide). Resolves after the step's cleanup. Idempotent: later calls
   * return the same promise.
   *
   * @throws the abort reason if the step's signal aborted (or {@link StepResult.cancel} was called)
   * while tools were still running; those tools are aborted and reclaimed first.
   */
  toolResults(): Promise<readonly ToolResult[]> {
    this.#results ??= this.collect();
    return this.#results;
  }

  /**
   * The tool results in completion order, as they arrive. Ends after the step's cleanup.
   *
   * @throws the abort reason if the tools were cancelled before every result arrived.
   */
  async *toolResultsAsCompleted(): AsyncGenerator<ToolResult, void, undefined> {
    const runs = this.#run.runs;
    let next = 0;
    for (;;) {
      while (next < runs.settledCount) yield runs.completed(next++);
      if (runs.running === 0) break;
      const cancellation = runs.cancellation;
      if (cancellation) {
        await this.#run.finish(cancellation.reason);
        throw cancellation.reason;
      }
      await runs.changed();
    }
    await this.#run.finish(undefined);
  }

  /**
   * Aborts the tools still running, waits for them (up to the cleanup deadline) and ends the step.
   * Afterwards `toolResults()` rejects with `reason` if tools were still running. Safe to call twice.
   */
  cancel(reason: unknown = new DOMException('The step was cancelled.', 'AbortError')): Promise<void> {
    return this.#run.cancel(reason);
  }

  private collect(): Promise<readonly ToolResult[]> {
    const run = this.#run;
    const { runs } = run;
    // Most steps: every call settled and none was cancelled (no async frame for them).
    if (runs.running === 0 && runs.cancellation === undefined) return run.finish(undefined).then(() => Object.freeze(runs.settledResults()));
    return this.collectWhenSettled();
  }

  private async collectWhenSettled(): Promise<readonly ToolResult[]> {
    const cancellation = await this.#run.settled();
    await this.#run.finish(cancellation?.reason);
    if (cancellation) throw cancellation.reason;
    return Object.freeze(this.#run.runs.settledResults());
  }
}
