/**
 * Helpers shared by the cross-package tests.
 */
import type { CleanupEvent, NamedStepHooks, StepEndEvent, ToolCall, ToolContext, ToolResult, Toolset } from '@kosong/core';
import type { StepHookName } from '@kosong/core/runtime';
import { toolOk } from '@kosong/core';
import { abortableDelay } from '@kosong/core/runtime';

/** Freezes a value and everything inside it. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Reflect.ownKeys(value)) deepFreeze((value as Record<PropertyKey, unknown>)[key]);
  }
  return value;
}

/** A promise with its resolve/reject exposed. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (error: unknown) => void } {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Resolves after `ms`. */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** How a fake tool behaves. */
export type ToolBehaviour =
  | { kind: 'sync' }
  | { kind: 'async'; ms: number }
  | { kind: 'throw' }
  | { kind: 'reject'; ms: number }
  | { kind: 'untilAborted' }
  | { kind: 'settleAfterAbort'; ms: number } // works 50 ms unless aborted; then takes `ms` to settle
  | { kind: 'ignoreAbort'; ms: number }
  | { kind: 'poisonedResult'; async: boolean }; // returns (or resolves with) a result whose toolCallId getter throws

/** What a {@link FakeToolset} saw of one call. */
export interface CallRecord {
  readonly call: ToolCall;
  readonly context: ToolContext;
  readonly startedAt: number;
  settledAt: number | undefined;
  sawAbort: boolean;
}

/**
 * A toolset whose tools behave as told per tool name (default: async 1 ms) and record every call:
 * when it started, whether it saw its abort signal, when it settled. Results echo the call id and
 * arguments so tests can check alignment.
 */
export class FakeToolset implements Toolset {
  readonly tools = [{ name: 'fake', description: 'A fake tool.', parameters: { type: 'object' } }];
  readonly records: CallRecord[] = [];
  running = 0;

  constructor(private readonly behaviour: (call: ToolCall) => ToolBehaviour = () => ({ kind: 'async', ms: 1 })) {}

  handle(call: ToolCall, context: ToolContext): ToolResult | Promise<ToolResult> {
    const record: CallRecord = { call, context, startedAt: performance.now(), settledAt: undefined, sawAbort: false };
    this.records.push(record);
    context.signal.addEventListener('abort', () => (record.sawAbort = true), { once: true });
    const result = (): ToolResult => ({ toolCallId: call.id, returnValue: toolOk({ output: `${call.id}:${call.function.arguments ?? ''}` }) });
    const behaviour = this.behaviour(call);
    switch (behaviour.kind) {
      case 'sync':
        record.settledAt = performance.now();
        return result();
      case 'throw':
        record.settledAt = performance.now();
        throw new Error(`tool ${call.id} exploded`);
      case 'poisonedResult':
        if (!behaviour.async) {
          record.settledAt = performance.now();
          return poisonedResult(call);
        }
        return this.track(record, Promise.resolve().then(() => poisonedResult(call)));
      default:
        return this.track(record, this.runAsync(behaviour, context, result));
    }
  }

  private async runAsync(behaviour: ToolBehaviour, context: ToolContext, result: () => ToolResult): Promise<ToolResult> {
    switch (behaviour.kind) {
      case 'async':
        await abortableSleep(behaviour.ms, context.signal);
        return result();
      case 'reject':
        await abortableSleep(behaviour.ms, context.signal);
        throw new Error('tool rejected');
      case 'untilAborted':
        await new Promise((resolve) => context.signal.addEventListener('abort', resolve, { once: true }));
        throw context.signal.reason;
      case 'settleAfterAbort':
        // Works for up to 50 ms; told to stop, it needs `ms` to close what it opened, like a real tool.
        try {
          await abortableSleep(50, context.signal);
          return result();
        } catch (reason) {
          await sleep(behaviour.ms);
          throw reason;
        }
      case 'ignoreAbort':
        await sleep(behaviour.ms);
        return result();
      default:
        throw new Error('unreachable');
    }
  }

  private async track(record: CallRecord, work: Promise<ToolResult>): Promise<ToolResult> {
    this.running++;
    try {
      return await work;
    } finally {
      this.running--;
      record.settledAt = performance.now();
    }
  }
}

/** A result whose `toolCallId` getter throws (reading it runs the tool's code). */
export function poisonedResult(call: ToolCall): ToolResult {
  return {
    get toolCallId(): string {
      throw new Error(`result of ${call.id} is poisoned`);
    },
    returnValue: toolOk({ output: 'never read' }),
  };
}

/** Sleeps, or rejects with the signal's reason when it aborts (core's `abortableDelay`). */
export const abortableSleep = (ms: number, signal: AbortSignal): Promise<void> => abortableDelay(ms, signal);

/** A hooks object that records every event it gets, as `[hookName, event]`. */
export function recordingHooks(name = 'recorder'): { entry: NamedStepHooks; events: [StepHookName, unknown][] } {
  const events: [StepHookName, unknown][] = [];
  const record = (hook: StepHookName) => (event: unknown) => {
    events.push([hook, event]);
  };
  return {
    events,
    entry: {
      name,
      hooks: {
        onStepStart: record('onStepStart'),
        onPart: record('onPart'),
        onToolCall: record('onToolCall'),
        onToolResult: record('onToolResult'),
        onStepEnd: record('onStepEnd'),
        onCleanup: record('onCleanup'),
      },
    },
  };
}

/** The names of recorded events, in order. */
export const namesOf = (events: readonly [StepHookName, unknown][]): StepHookName[] => events.map(([name]) => name);

/** The single event of a kind (fails if there is not exactly one). */
export function only<E>(events: readonly [StepHookName, unknown][], hook: StepHookName): E {
  const found = events.filter(([name]) => name === hook);
  if (found.length !== 1) throw new Error(`expected exactly one ${hook}, got ${found.length}`);
  return found[0]![1] as E;
}

export type { CleanupEvent, StepEndEvent };
