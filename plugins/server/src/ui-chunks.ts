import { randomUUID } from 'node:crypto';

import { inputTokens, totalTokens, type AgentEvent, type AgentTurnResult, type FinishReason, type PendingApproval, type TokenUsage, type ToolResult } from '@kosong/core';
import { costOf, type UsagePricing } from '@kosong/core/kernel';

import { approvalIdOf } from './approval-id.js';

/** Token counts, as the message metadata carries them. */
export interface UsageMetadata {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly totalTokens: number;
  /** Input tokens read from the provider's prompt cache (part of `inputTokens`). */
  readonly cachedInputTokens: number;
  /** Input tokens written to the provider's prompt cache (part of `inputTokens`). */
  readonly cacheCreationInputTokens: number;
}

/** The message metadata of the `finish` chunk: the turn's usage, its cost, and how it ended. */
export interface ChatMessageMetadata {
  /** Tokens of the whole turn (every step). */
  readonly usage: UsageMetadata;
  /**
   * What the turn cost, in US dollars: the sum of its steps' costs (see {@link StepMetadata.cost}).
   * `null` when it is not known: a step's model has no price, a step reported no usage, or the
   * response is a continuation after an approval (the turn's earlier steps were priced in the
   * stream that ran them).
   */
  readonly cost: number | null;
  /** Why the turn ended (`AgentStopReason` of `@kosong/core`). */
  readonly stopReason: AgentTurnResult['stopReason'];
  /** How many steps the turn ran. */
  readonly steps: number;
}

/**
 * One step's usage and cost: the message metadata `{ step: StepMetadata }` of the
 * `message-metadata` chunk sent after the step's `finish-step` (merged into the message's metadata,
 * so `metadata.step` is the last step's).
 */
export interface StepMetadata {
  /** The step's tokens. */
  readonly usage: UsageMetadata;
  /**
   * What the step cost, in US dollars, priced as the kernel's usage ledger prices it (the kernel's
   * `prices`, then the model catalog); `null` when its model has no price: unknown, never 0.
   */
  readonly cost: number | null;
  /** The step's model, as `<provider>/<model>` (the `ChatProvider`'s `name` and `modelName`). */
  readonly model: string | null;
}

/** The finish reasons of the AI SDK's UI message stream. */
export type UiFinishReason = 'stop' | 'length' | 'content-filter' | 'tool-calls' | 'error' | 'other';

/**
 * The chunks of the AI SDK's UI message stream v1 that this server sends: a subset of the AI SDK's
 * `UIMessageChunk` (`ai` 6), with the same fields. Tool parts are sent as dynamic tools
 * (`dynamic: true`): the client gets `dynamic-tool` parts, whatever tools it knows of.
 */
export type UiMessageChunk =
  | { readonly type: 'start'; readonly messageId?: string; readonly messageMetadata?: unknown }
  | { readonly type: 'start-step' }
  | { readonly type: 'finish-step' }
  | { readonly type: 'text-start'; readonly id: string }
  | { readonly type: 'text-delta'; readonly id: string; readonly delta: string }
  | { readonly type: 'text-end'; readonly id: string }
  | { readonly type: 'reasoning-start'; readonly id: string }
  | { readonly type: 'reasoning-delta'; readonly id: string; readonly delta: string }
  | { readonly type: 'reasoning-end'; readonly id: string }
  | { readonly type: 'tool-input-start'; readonly toolCallId: string; readonly toolName: string; readonly dynamic: true }
  | { readonly type: 'tool-input-delta'; readonly toolCallId: string; readonly inputTextDelta: string }
  | { readonly type: 'tool-input-available'; readonly toolCallId: string; readonly toolName: string; readonly input: unknown; readonly dynamic: true }
  | { readonly type: 'tool-output-available'; readonly toolCallId: string; readonly output: unknown; readonly dynamic: true }
  | { readonly type: 'tool-output-error'; readonly toolCallId: string; readonly errorText: string; readonly dynamic: true }
  | { readonly type: 'tool-approval-request'; readonly approvalId: string; readonly toolCallId: string }
  | { readonly type: 'tool-output-denied'; readonly toolCallId: string }
  | { readonly type: 'finish'; readonly finishReason?: UiFinishReason; readonly messageMetadata?: unknown }
  | { readonly type: 'message-metadata'; readonly messageMetadata: unknown }
  | { readonly type: 'data-kosong-retry'; readonly data: RetryChunkData; readonly transient: true }
  | { readonly type: 'error'; readonly errorText: string }
  | { readonly type: 'abort'; readonly reason?: string };

/** The data of a `data-kosong-retry` chunk: an attempt of the step failed, and the step is tried again. */
export interface RetryChunkData {
  /** The attempt that failed (1 is the first). */
  readonly attempt: number;
  readonly nextAttempt: number;
  /** How long the agent waits before the next attempt. */
  readonly delayMs: number;
  /** Why the attempt failed (as the handler's `errorText` says it). */
  readonly error: string;
}

/** One chunk as a server-sent event: `data: <json>\n\n`. */
export function sseFrame(chunk: UiMessageChunk): string {
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

/** The frame that ends a UI message stream. */
export const SSE_DONE = 'data: [DONE]\n\n';

/**
 * Turns the events of one agent turn into UI message chunks, in order: `start`, then per step
 * `start-step`, its text, reasoning and tool parts, `finish-step` and a `message-metadata` chunk
 * with the step's usage and cost (`{ step: StepMetadata }`); a failed attempt that is tried again, a transient
 * `data-kosong-retry` chunk; then `tool-approval-request`s (a turn that waits), and `finish` (or
 * `error`, or `abort`). A part is closed (`text-end`, `reasoning-end`) when another kind of part follows it,
 * when its step ends, and when the turn ends.
 */
export class UiChunkWriter {
  private open: { readonly type: 'text' | 'reasoning'; readonly id: string } | undefined;
  /** The tool call whose arguments are streaming. */
  private streamingCall: string | undefined;
  private inStep = false;
  private lastFinish: FinishReason | undefined;
  /** The calls denied in this turn: their results are `tool-output-denied`. */
  private readonly denied: Set<string>;
  /** A continuation's first step is the pending step, whose `start-step` the client already has. */
  private continuedStep: boolean;
  /** The provider and model of the step running (its latest attempt), from {@link UiChunkWriter.stepModel}. */
  private model: { readonly provider: string; readonly model: string } | undefined;
  /** What the turn's steps cost so far; `null`: not known. */
  private turnCost: number | null;

  /**
   * @param send where the chunks go, in order.
   * @param continuation a turn that goes on with a step that waited for approval (the client's
   *   assistant message continues): its first step sends no `start-step`/`finish-step`, and the
   *   calls in `denied` get `tool-output-denied`.
   * @param pricing the kernel's prices (its `UsagePricing`): each step's cost; without it, every cost is `null`.
   */
  constructor(
    private readonly send: (chunk: UiMessageChunk) => void,
    continuation?: { readonly denied: Iterable<string> },
    private readonly describeError: (error: unknown) => string = (error) => (error instanceof Error ? error.message : String(error)),
    private readonly pricing?: UsagePricing,
  ) {
    this.denied = new Set(continuation?.denied ?? []);
    this.continuedStep = continuation !== undefined;
    this.turnCost = continuation === undefined ? 0 : null;
  }

  /** The first chunk. */
  start(messageId: string): void {
    this.send({ type: 'start', messageId });
  }

  /**
   * The provider and model of the step that runs now (an attempt begins: the step hooks'
   * `onStepStart`), which its usage is priced with.
   */
  stepModel(provider: string, model: string): void {
    this.model = { provider, model };
  }

  /** Translates one agent event. */
  event(event: AgentEvent): void {
    switch (event.type) {
      case 'step_start':
        if (!this.inStep) {
          this.inStep = true;
          if (!this.continuedStep) this.send({ type: 'start-step' });
        }
        return;
      case 'part':
        this.part(event.part);
        return;
      case 'tool_call': {
        // In a continuation, these are the calls decided now: the client that answered has their
        // parts (this updates them), a client that resumes the continuation after a reload gets them.
        this.closePart();
        if (this.streamingCall === event.toolCall.id) this.streamingCall = undefined;
        const call = event.toolCall;
        this.send({ type: 'tool-input-available', toolCallId: call.id, toolName: call.function.name, input: parseInput(call.function.arguments), dynamic: true });
        return;
      }
      case 'tool_result':
        this.toolResult(event.result);
        return;
      case 'retry':
        // What the failed attempt streamed stays in the UI message (a stream cannot take chunks back); its step goes on.
        this.closePart();
        this.streamingCall = undefined;
        this.send({
          type: 'data-kosong-retry',
          data: { attempt: event.attempt, nextAttempt: event.nextAttempt, delayMs: event.delayMs, error: this.describeError(event.error) },
          transient: true,
        });
        return;
      case 'step_end': {
        this.lastFinish = event.finishReason;
        const ownStep = !this.continuedStep;
        this.endStep();
        if (ownStep) this.stepUsage(event.usage);
        return;
      }
      case 'approval_decision':
        if (event.decision.type === 'deny') this.denied.add(event.toolCall.id);
        return;
      default:
        // approval_request: a call is asked about; it waits only if deferred (see approvalRequests).
        return;
    }
  }

  /**
   * A `tool-approval-request` per call that waits for approval (the turn ended `approval_required`),
   * after the waiting step's `finish-step` and its usage (`usage`: the pending step's).
   */
  approvalRequests(pending: readonly PendingApproval[], usage?: TokenUsage): void {
    const ownStep = this.inStep && !this.continuedStep;
    this.endStep();
    if (ownStep) this.stepUsage(usage);
    for (const call of pending) this.send({ type: 'tool-approval-request', approvalId: approvalIdOf(call), toolCallId: call.toolCall.id });
  }

  /** The last chunk of a turn that returned. */
  finish(result: AgentTurnResult): void {
    this.endStep();
    const metadata: ChatMessageMetadata = { usage: usageMetadata(result.usage), cost: this.turnCost, stopReason: result.stopReason, steps: result.steps };
    const finishReason: UiFinishReason = result.stopReason === 'no_tool_calls' ? uiFinishReason(this.lastFinish) : 'tool-calls';
    this.send({ type: 'finish', finishReason, messageMetadata: metadata });
  }

  /** The last chunk of a turn that failed. */
  error(errorText: string): void {
    this.endStep();
    this.send({ type: 'error', errorText });
  }

  /** The last chunk of a turn that was aborted. */
  abort(reason: string): void {
    this.endStep();
    this.send({ type: 'abort', reason });
  }

  /**
   * The `message-metadata` chunk of a step that ended (for a timeline: merged into the message's
   * metadata as `step`), priced with the step's model; none for a step without usage (whose cost,
   * and so the turn's, is then not known).
   */
  private stepUsage(usage: TokenUsage | undefined): void {
    if (usage === undefined) {
      this.turnCost = null;
      return;
    }
    const model = this.model;
    const price = model === undefined ? undefined : this.pricing?.priceOf(model.provider, model.model);
    const cost = price === undefined ? null : costOf(usage, price);
    this.turnCost = cost === null || this.turnCost === null ? null : this.turnCost + cost;
    const step: StepMetadata = { usage: usageMetadata(usage), cost, model: model === undefined ? null : `${model.provider}/${model.model}` };
    this.send({ type: 'message-metadata', messageMetadata: { step } });
  }

  private part(part: Extract<AgentEvent, { type: 'part' }>['part']): void {
    switch (part.type) {
      case 'text':
        if (part.text !== '') this.delta('text', part.text);
        return;
      case 'think':
        if (part.think !== '') this.delta('reasoning', part.think);
        if (part.encrypted !== undefined && this.open?.type === 'reasoning') this.closePart(); // a signature closes the thinking
        return;
      case 'function':
        this.closePart();
        this.streamingCall = part.id;
        this.send({ type: 'tool-input-start', toolCallId: part.id, toolName: part.function.name, dynamic: true });
        if (part.function.arguments) this.send({ type: 'tool-input-delta', toolCallId: part.id, inputTextDelta: part.function.arguments });
        return;
      case 'tool_call_part':
        if (this.streamingCall !== undefined && part.argumentsPart) this.send({ type: 'tool-input-delta', toolCallId: this.streamingCall, inputTextDelta: part.argumentsPart });
        return;
      default:
        // Media parts from the model (images, audio, video) are not sent yet.
        return;
    }
  }

  private delta(type: 'text' | 'reasoning', delta: string): void {
    if (this.open?.type !== type) {
      this.closePart();
      this.streamingCall = undefined;
      const id = randomUUID();
      this.open = { type, id };
      this.send(type === 'text' ? { type: 'text-start', id } : { type: 'reasoning-start', id });
    }
    const id = this.open.id;
    this.send(type === 'text' ? { type: 'text-delta', id, delta } : { type: 'reasoning-delta', id, delta });
  }

  private toolResult(result: ToolResult): void {
    if (result.deferred === true) return; // waits for approval: not a result
    if (this.denied.has(result.toolCallId)) {
      this.send({ type: 'tool-output-denied', toolCallId: result.toolCallId });
      return;
    }
    const value = result.returnValue;
    if (value.isError) {
      const output = typeof value.output === 'string' ? value.output : '';
      this.send({ type: 'tool-output-error', toolCallId: result.toolCallId, errorText: [value.message, output].filter((text) => text !== '').join('\n') || 'The tool call failed', dynamic: true });
    } else {
      this.send({ type: 'tool-output-available', toolCallId: result.toolCallId, output: value.output, dynamic: true });
    }
  }

  private closePart(): void {
    const open = this.open;
    if (open === undefined) return;
    this.open = undefined;
    this.send(open.type === 'text' ? { type: 'text-end', id: open.id } : { type: 'reasoning-end', id: open.id });
  }

  private endStep(): void {
    this.closePart();
    this.streamingCall = undefined;
    if (this.inStep) {
      this.inStep = false;
      if (this.continuedStep) this.continuedStep = false;
      else this.send({ type: 'finish-step' });
    }
  }
}

/** A tool call's arguments as the UI's input: the parsed JSON, `{}` for none, the raw text if it is not JSON. */
function parseInput(args: string | null): unknown {
  if (args === null || args.trim() === '') return {};
  try {
    return JSON.parse(args) as unknown;
  } catch {
    return args;
  }
}

function uiFinishReason(reason: FinishReason | undefined): UiFinishReason {
  switch (reason) {
    case 'stop':
      return 'stop';
    case 'tool_calls':
      return 'tool-calls';
    case 'length':
      return 'length';
    case 'content_filter':
      return 'content-filter';
    case undefined:
      return 'stop';
    default:
      return 'other';
  }
}

function usageMetadata(usage: TokenUsage): UsageMetadata {
  return {
    inputTokens: inputTokens(usage),
    outputTokens: usage.output,
    totalTokens: totalTokens(usage),
    cachedInputTokens: usage.inputCacheRead,
    cacheCreationInputTokens: usage.inputCacheCreation,
  };
}
