import type { UIMessageChunk } from 'ai';

/** Token counts as the server sends them in message metadata (`ChatMessageMetadata['usage']`). */
export interface Usage {
  readonly inputTokens?: number;
  readonly outputTokens?: number;
  readonly totalTokens?: number;
  readonly cachedInputTokens?: number;
}

/** What a tool call did, as far as the stream told. */
export type ToolState = 'input-streaming' | 'running' | 'approval-requested' | 'done' | 'error' | 'denied';

/** One tool call of a step: a bar from the call's completion (`tool-input-available`) to its result. */
export interface ToolBar {
  readonly toolCallId: string;
  toolName: string;
  /** When its arguments began to stream (`tool-input-start`), ms since the turn began. */
  inputStartAt: number | undefined;
  /** When the call was complete and dispatched (`tool-input-available`). */
  calledAt: number | undefined;
  /** When its result came (`tool-output-available`, `tool-output-error`, `tool-output-denied`). */
  endedAt: number | undefined;
  state: ToolState;
  /** The approval to answer, while `state` is `approval-requested`. */
  approvalId: string | undefined;
  /** The result (or error) as short text. */
  result: string | undefined;
}

/** One step of a turn: its model stream (`start-step` to the last part it streamed), and its tool calls in call order. */
export interface StepBar {
  readonly index: number;
  readonly startAt: number;
  /** The last text, reasoning or tool-input chunk of the step. */
  streamEndAt: number | undefined;
  /** `finish-step`. */
  endAt: number | undefined;
  readonly tools: ToolBar[];
  /** From a `message-metadata` chunk `{ step: { usage, cost, model } }` after this step's `finish-step`. */
  usage: Usage | undefined;
  /** From the same chunk's `cost`: US dollars; `null`: the server says it is unknown (no price for the model); `undefined`: not sent. */
  cost: Cost;
  /** From the same chunk's `model` (`<provider>/<model>`), when sent. */
  model: string | undefined;
  /** The step's retried attempts, from `data-kosong-retry` chunks. */
  readonly retries: Retry[];
}

/** A cost in US dollars; `null` when the server says it is unknown; `undefined` when it sent none. */
export type Cost = number | null | undefined;

/** A failed attempt of a step that is tried again (a `data-kosong-retry` chunk's data). */
export interface Retry {
  /** When the chunk came, ms since the turn began. */
  readonly at: number;
  /** The attempt that failed (1 is the first). */
  readonly attempt: number;
  /** How long the server waits before the next attempt. */
  readonly delayMs: number | undefined;
  /** Why the attempt failed. */
  readonly error: string;
}

/** One response stream: a turn, or its replay after a reload. */
export interface TurnTimeline {
  readonly number: number;
  /** `resume`: the stream came from `GET …/stream` (a replay: times are when chunks arrived, not when the server made them). */
  readonly origin: 'send' | 'resume';
  /** `performance.now()` when the request was made; every other time is relative to it. */
  readonly startedAt: number;
  messageId: string | undefined;
  /** Steps of the same assistant message in earlier streams (a continuation after an approval goes on counting). */
  stepOffset: number;
  readonly steps: StepBar[];
  /**
   * Calls of an earlier turn's step that waited for approval and ran in this one (a continuation:
   * its stream begins with their results): bars from the turn's start (the answer sent) to their result.
   */
  readonly approvedCalls: ToolBar[];
  endAt: number | undefined;
  outcome: { readonly kind: 'finish' | 'error' | 'abort'; readonly text: string } | undefined;
  /** The stream ended here without a last chunk (it failed, or the page closed it): the turn may go on on the server. */
  cutHere: boolean;
  /** The whole turn's usage (`finish`'s message metadata). */
  usage: Usage | undefined;
  /** The whole turn's cost (`finish`'s message metadata). */
  cost: Cost;
}

/**
 * Records the chunks of the UI message streams a chat receives, with the time each arrives, as
 * turns of steps and tool calls: what the step timeline draws. Listeners are told of every change.
 */
export class TimelineRecorder {
  readonly turns: TurnTimeline[];
  private readonly listeners = new Set<() => void>();
  private changes = 0;

  /** @param earlier turns recorded before (kept by the tab across a reload), drawn first. */
  constructor(earlier: readonly TurnTimeline[] = []) {
    this.turns = [...earlier];
  }

  /** The turns whose stream the server ended (what a reload keeps; a turn cut here is resumed instead). */
  get endedTurns(): TurnTimeline[] {
    return this.turns.filter((turn) => turn.endAt !== undefined && !turn.cutHere);
  }

  /** A counter that changes with every recorded chunk (for `useSyncExternalStore`). */
  get version(): number {
    return this.changes;
  }

  /** Calls `listener` after each change; returns the unsubscribe function. */
  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  };

  /** A new response stream begins (a POST, or a resume); its chunks are recorded with {@link TimelineRecorder.record}. */
  begin(origin: TurnTimeline['origin'], now: number): TurnTimeline {
    const turn: TurnTimeline = { number: this.turns.length + 1, origin, startedAt: now, messageId: undefined, stepOffset: 0, steps: [], approvedCalls: [], endAt: undefined, outcome: undefined, cutHere: false, usage: undefined, cost: undefined };
    this.turns.push(turn);
    this.changed();
    return turn;
  }

  /** Records one chunk of `turn`, arrived at `now` (`performance.now()`). */
  record(turn: TurnTimeline, chunk: UIMessageChunk, now: number): void {
    const at = now - turn.startedAt;
    const step = turn.steps.at(-1);
    switch (chunk.type) {
      case 'start':
        turn.messageId = chunk.messageId;
        turn.stepOffset = this.turns.filter((earlier) => earlier !== turn && earlier.messageId !== undefined && earlier.messageId === chunk.messageId).reduce((count, earlier) => count + earlier.steps.length, 0);
        break;
      case 'start-step':
        turn.steps.push(newStep(turn.steps.length, at));
        break;
      case 'finish-step':
        if (step !== undefined) step.endAt = at;
        break;
      case 'text-start':
      case 'text-delta':
      case 'text-end':
      case 'reasoning-start':
      case 'reasoning-delta':
      case 'reasoning-end':
        if (step !== undefined) step.streamEndAt = at;
        break;
      case 'tool-input-start':
      case 'tool-input-delta':
      case 'tool-input-available':
      case 'tool-input-error': {
        if (step !== undefined) step.streamEndAt = at;
        const tool = this.tool(turn, chunk.toolCallId, 'toolName' in chunk ? chunk.toolName : undefined);
        if (tool === undefined) break;
        if (chunk.type === 'tool-input-start') tool.inputStartAt ??= at;
        if (chunk.type === 'tool-input-available') {
          tool.calledAt = at;
          if (tool.state === 'input-streaming') tool.state = 'running';
        }
        if (chunk.type === 'tool-input-error') {
          tool.calledAt ??= at;
          tool.endedAt = at;
          tool.state = 'error';
          tool.result = chunk.errorText;
        }
        break;
      }
      case 'tool-approval-request': {
        const tool = this.tool(turn, chunk.toolCallId, undefined);
        if (tool === undefined) break;
        tool.state = 'approval-requested';
        tool.approvalId = chunk.approvalId;
        break;
      }
      case 'tool-output-available':
      case 'tool-output-error':
      case 'tool-output-denied': {
        const waited = this.find(turn, chunk.toolCallId) === undefined ? this.findEarlier(turn, chunk.toolCallId) : undefined;
        if (waited !== undefined) {
          // A call that waited for approval in an earlier turn: its run is in this one.
          const ran: ToolBar = { ...waited, inputStartAt: undefined, calledAt: 0, endedAt: undefined };
          turn.approvedCalls.push(ran);
          settle(ran, chunk, at);
          settle(waited, chunk, undefined);
          break;
        }
        const tool = this.tool(turn, chunk.toolCallId, undefined);
        if (tool === undefined) break;
        tool.calledAt ??= at;
        settle(tool, chunk, at);
        break;
      }
      case 'message-metadata': {
        const stepMetadata = (chunk.messageMetadata as { step?: unknown } | undefined)?.step;
        const { usage, cost } = readMetadata(stepMetadata);
        if (step === undefined || usage === undefined) return;
        step.usage = usage;
        step.cost = cost;
        step.model = readString(stepMetadata, 'model');
        break;
      }
      case 'finish': {
        const { usage, cost } = readMetadata(chunk.messageMetadata);
        turn.endAt = at;
        turn.usage = usage;
        turn.cost = cost;
        const stopReason = readString(chunk.messageMetadata, 'stopReason');
        turn.outcome = { kind: 'finish', text: [chunk.finishReason, stopReason].filter((text) => text !== undefined).join(' · ') };
        break;
      }
      case 'error':
        turn.endAt = at;
        turn.outcome = { kind: 'error', text: chunk.errorText };
        break;
      case 'abort':
        turn.endAt = at;
        turn.outcome = { kind: 'abort', text: chunk.reason ?? 'aborted' };
        break;
      default:
        if (chunk.type !== 'data-kosong-retry') return;
        this.retry(turn, (chunk as { data?: unknown }).data, at);
    }
    this.changed();
  }

  private retry(turn: TurnTimeline, data: unknown, at: number): void {
    const { attempt, delayMs, error } = (typeof data === 'object' && data !== null ? data : {}) as { attempt?: unknown; delayMs?: unknown; error?: unknown };
    let step = turn.steps.at(-1);
    if (step === undefined) {
      step = newStep(0, at);
      turn.steps.push(step);
    }
    step.retries.push({
      at,
      attempt: typeof attempt === 'number' ? attempt : step.retries.length + 1,
      delayMs: typeof delayMs === 'number' ? delayMs : undefined,
      error: typeof error === 'string' ? error : 'failed',
    });
  }

  /** The user answered approval `approvalId` (its buttons go; the result comes with the next stream). */
  answer(approvalId: string, approved: boolean): void {
    for (const turn of this.turns) {
      for (const step of turn.steps) {
        for (const tool of step.tools) {
          if (tool.approvalId !== approvalId) continue;
          tool.approvalId = undefined;
          tool.state = approved ? 'running' : 'denied';
          tool.result = approved ? 'approved' : 'denied';
          this.changed();
        }
      }
    }
  }

  /** The stream of `turn` ended without a last chunk (the connection went, the user stopped). */
  cut(turn: TurnTimeline, now: number, why: string): void {
    if (turn.endAt !== undefined) return;
    turn.endAt = now - turn.startedAt;
    turn.cutHere = true;
    turn.outcome = { kind: 'abort', text: why };
    this.changed();
  }

  private find(turn: TurnTimeline, toolCallId: string): ToolBar | undefined {
    for (const step of turn.steps) {
      const found = step.tools.find((tool) => tool.toolCallId === toolCallId);
      if (found !== undefined) return found;
    }
    return turn.approvedCalls.find((tool) => tool.toolCallId === toolCallId);
  }

  /** The call of an earlier turn (the latest first) that waits for approval, or was just answered. */
  private findEarlier(turn: TurnTimeline, toolCallId: string): ToolBar | undefined {
    for (let index = this.turns.indexOf(turn) - 1; index >= 0; index -= 1) {
      const found = this.find(this.turns[index]!, toolCallId);
      if (found !== undefined) return found;
    }
    return undefined;
  }

  private tool(turn: TurnTimeline, toolCallId: string, toolName: string | undefined): ToolBar | undefined {
    const found = this.find(turn, toolCallId);
    if (found !== undefined) {
      if (toolName !== undefined) found.toolName = toolName;
      return found;
    }
    const step = turn.steps.at(-1);
    if (step === undefined) return undefined;
    const tool: ToolBar = { toolCallId, toolName: toolName ?? '?', inputStartAt: undefined, calledAt: undefined, endedAt: undefined, state: 'input-streaming', approvalId: undefined, result: undefined };
    step.tools.push(tool);
    return tool;
  }

  private changed(): void {
    this.changes += 1;
    for (const listener of this.listeners) listener();
  }
}

function newStep(index: number, at: number): StepBar {
  return { index, startAt: at, streamEndAt: undefined, endAt: undefined, tools: [], usage: undefined, cost: undefined, model: undefined, retries: [] };
}

/** A tool's result chunk: its state and result text, and when it came (`undefined`: the bar keeps its end). */
function settle(tool: ToolBar, chunk: Extract<UIMessageChunk, { type: 'tool-output-available' | 'tool-output-error' | 'tool-output-denied' }>, at: number | undefined): void {
  if (at !== undefined) tool.endedAt = at;
  tool.approvalId = undefined;
  if (chunk.type === 'tool-output-available') {
    tool.state = 'done';
    tool.result = shortText(chunk.output);
  } else if (chunk.type === 'tool-output-error') {
    tool.state = 'error';
    tool.result = chunk.errorText;
  } else {
    tool.state = 'denied';
    tool.result = 'denied';
  }
}

function readMetadata(metadata: unknown): { usage: Usage | undefined; cost: Cost } {
  if (typeof metadata !== 'object' || metadata === null) return { usage: undefined, cost: undefined };
  const record = metadata as { usage?: unknown; cost?: unknown };
  const usage = typeof record.usage === 'object' && record.usage !== null ? (record.usage as Usage) : undefined;
  const cost = record.cost === null ? null : typeof record.cost === 'number' && Number.isFinite(record.cost) ? record.cost : undefined;
  return { usage, cost };
}

function readString(metadata: unknown, key: string): string | undefined {
  if (typeof metadata !== 'object' || metadata === null) return undefined;
  const value = (metadata as Record<string, unknown>)[key];
  return typeof value === 'string' ? value : undefined;
}

/** A value as at most 200 characters of text. */
export function shortText(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value) ?? String(value);
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}
