import type { Message } from '../message/message.js';
import type { ContentPart, ToolCall } from '../message/parts.js';
import type { StepLedger } from '../runtime/step-ledger.js';
import type { ToolResult } from '../tooling/tool-result.js';

/**
 * The record of a call about to run: its step's key, its index, and what the message gained since
 * the step's previous start record (content parts and calls, appended at `contentFrom` /
 * `callsFrom`), so the step's message so far can be rebuilt from its records.
 */
export interface CallStartRecord {
  readonly type: 'start';
  readonly key: string;
  readonly index: number;
  readonly contentFrom: number;
  readonly content: readonly ContentPart[];
  readonly callsFrom: number;
  readonly toolCalls: readonly ToolCall[];
}

/** The record of a call's outcome. */
export interface CallOutcomeRecord {
  readonly type: 'outcome';
  readonly key: string;
  readonly index: number;
  readonly result: ToolResult;
  /**
   * `false` when the toolset was never called after all (the step was cancelled while the start was
   * being recorded): a redo then takes the call for one that never started. Absent: it ran.
   */
  readonly ran?: false;
}

/** Options of {@link CallLedger.recordStart}. */
export interface RecordStartOptions {
  /** `false`: the record need only survive the process, not a power cut (default `true`). */
  readonly sync?: boolean;
}

/** A record of the call ledger. */
export type CallRecord = CallStartRecord | CallOutcomeRecord;

/** A call of an {@link OpenStep}, as the ledger knows it. */
export interface LedgerCall {
  /** Whether its start was recorded: it may have run. */
  readonly started: boolean;
  /** Its outcome, when that was recorded too. */
  readonly result: ToolResult | undefined;
}

/**
 * A step whose calls the ledger recorded and that is not (yet) in the history: the process running
 * it stopped, it failed, or it waits for approval. Whoever next runs or resumes the context
 * completes it from here — never by asking the model again, and never running a call whose start
 * was recorded without its outcome, unless the call's replay policy allows it.
 */
export interface OpenStep {
  /** The step's stable key (see `StepLedger.key`). */
  readonly key: string;
  /** The message as far as the records go: the content and the calls made by the last recorded start. */
  readonly message: Message;
  /** Index-aligned with `message.toolCalls`. */
  readonly calls: readonly LedgerCall[];
}

/**
 * The durable call ledger of an {@link AgentContext}, kept in the same store as the history (records
 * in the JSONL file of a `LinearContext`, fenced scripts for a `RedisContext`).
 *
 * A start is recorded before the call runs, and {@link CallLedger.recordStart} resolves only once
 * the record would survive the process; an outcome when the call settles. Appending to the history
 * (the step's messages, or anything else) closes the open step: its records are then history.
 */
export interface CallLedger {
  /** The step with recorded calls that is not in the history, if there is one. */
  readonly openStep: OpenStep | undefined;
  /**
   * Records a call's start, durably: it resolves once the record would survive the process and,
   * unless `options.sync` is `false` (a call safe to run again), a power cut (a sync to disk).
   * `undefined` instead of a promise: it is recorded already (a ledger in memory).
   *
   * @throws Error when the record does not follow the open step (another step is open, or the
   *   message does not continue its records), or the store refuses it.
   */
  recordStart(record: CallStartRecord, options?: RecordStartOptions): Promise<void> | undefined;
  /**
   * Records a call's outcome (it may be written lazily: before the next append, in order).
   * `undefined` instead of a promise: it is recorded already (a ledger in memory).
   *
   * @throws Error when the record names a call whose start is not recorded (a ledger in memory
   *   throws; a store's promise rejects).
   */
  recordOutcome(record: CallOutcomeRecord): Promise<void> | undefined;
}

/**
 * The state of a ledger's open step, as its records build it: what a context keeps in memory, and
 * the one place where a record is checked against the records before it (a context applies each
 * record here before it stores it, and each record it loads).
 */
export class OpenStepState {
  private step: { key: string; content: ContentPart[]; toolCalls: ToolCall[]; calls: LedgerCall[] } | undefined;

  /** The open step, if any (a new object each time it changed). */
  get openStep(): OpenStep | undefined {
    const step = this.step;
    if (step === undefined) return undefined;
    const message: Message = { role: 'assistant', content: step.content.slice(), toolCalls: step.toolCalls.slice() };
    return { key: step.key, message, calls: step.calls.slice() };
  }

  /** The key of the open step, if any. */
  get key(): string | undefined {
    return this.step?.key;
  }

  /**
   * Applies a record. A start record of another key while a step is open replaces nothing: it is
   * refused, as is one that does not continue the step's message or names a call it does not have,
   * and an outcome of a call whose start is not recorded.
   *
   * @throws Error saying which.
   */
  apply(record: CallRecord): void {
    const step = this.step;
    if (record.type === 'outcome') {
      if (step?.key !== record.key) throw new Error(`an outcome of a call of step "${record.key}", which has no recorded start`);
      const call = step.calls[record.index];
      if (call?.started !== true) throw new Error(`an outcome of call ${record.index} of step "${record.key}", whose start is not recorded`);
      step.calls[record.index] = record.ran === false ? NOT_STARTED : { started: true, result: record.result };
      return;
    }
    if (step !== undefined && step.key !== record.key) {
      throw new Error(`a call of step "${record.key}" starts while step "${step.key}" is open (not in the history)`);
    }
    const current = step ?? { key: record.key, content: [], toolCalls: [], calls: [] };
    if (record.contentFrom !== current.content.length || record.callsFrom !== current.toolCalls.length) {
      throw new Error(
        `the start of call ${record.index} of step "${record.key}" continues the message at part ${record.contentFrom} and call ${record.callsFrom}, ` +
          `but the records so far have ${current.content.length} parts and ${current.toolCalls.length} calls`,
      );
    }
    const callCount = current.toolCalls.length + record.toolCalls.length;
    if (!Number.isSafeInteger(record.index) || record.index < 0 || record.index >= callCount) {
      throw new Error(`the start of call ${record.index} of step "${record.key}", whose message has ${callCount} calls`);
    }
    current.content.push(...record.content);
    current.toolCalls.push(...record.toolCalls);
    while (current.calls.length < current.toolCalls.length) current.calls.push(NOT_STARTED);
    current.calls[record.index] = { started: true, result: undefined };
    this.step = current;
  }

  /** Forgets the open step (its step is in the history now). */
  close(): void {
    this.step = undefined;
  }
}

const NOT_STARTED: LedgerCall = Object.freeze({ started: false, result: undefined });

/**
 * A call ledger in memory: for contexts without a store (a `LinearContext` without a file) and for
 * contexts that have no ledger of their own, so that a retried step in this process still never runs
 * a call twice unasked. It survives nothing but the process.
 */
export class MemoryCallLedger implements CallLedger {
  readonly #state = new OpenStepState();

  get openStep(): OpenStep | undefined {
    return this.#state.openStep;
  }

  recordStart(record: CallStartRecord): undefined {
    this.#state.apply(record);
    return undefined;
  }

  recordOutcome(record: CallOutcomeRecord): undefined {
    this.#state.apply(record);
    return undefined;
  }

  /** Forgets the open step (the step is in the history now). */
  close(): void {
    this.#state.close();
  }
}

/**
 * The {@link StepLedger} of one step over a context's call ledger: start records carry what the
 * message gained since the step's previous record (the step's records so far, in the open step,
 * when the step is done again).
 */
export function stepLedgerOf(ledger: CallLedger, key: string): StepLedger {
  const open = ledger.openStep;
  let contentLength = open?.key === key ? open.message.content.length : 0;
  let callsLength = open?.key === key ? (open.message.toolCalls?.length ?? 0) : 0;
  return {
    key,
    callStarted(index, content, toolCalls, sync) {
      const record: CallStartRecord = {
        type: 'start',
        key,
        index,
        contentFrom: contentLength,
        content: content.slice(contentLength),
        callsFrom: callsLength,
        toolCalls: toolCalls.slice(callsLength),
      };
      contentLength = Math.max(contentLength, content.length);
      callsLength = Math.max(callsLength, toolCalls.length);
      return sync === false ? ledger.recordStart(record, { sync: false }) : ledger.recordStart(record);
    },
    callSettled(index, result, ran) {
      const record: CallOutcomeRecord = ran === false ? { type: 'outcome', key, index, result, ran } : { type: 'outcome', key, index, result };
      try {
        ledger.recordOutcome(record)?.catch(() => undefined); // a lost outcome: the call counts as interrupted
      } catch {
        // the same
      }
    },
  };
}
