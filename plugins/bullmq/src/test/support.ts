import { randomUUID } from 'node:crypto';
import { toolOk, type Tool, type ToolCall, type ToolContext, type ToolResult, type Toolset } from '@kosong/core';
import { toolCancelled, toolNotFound } from '@kosong/core/toolset-kit';

/** A unique key prefix, so tests sharing one Redis never see each other's keys. */
export const testPrefix = (): string => `t${randomUUID().slice(0, 8)}`;

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs a spec's cleanups, the last added first, and empties the list: every one runs even when
 * another fails (a client left open keeps the test process alive once its Redis is stopped); the
 * first failure is rethrown at the end.
 */
export async function closeAll(closers: (() => Promise<unknown>)[]): Promise<void> {
  const failures: unknown[] = [];
  for (const close of closers.splice(0).reverse()) {
    try {
      await close();
    } catch (error) {
      failures.push(error);
    }
  }
  if (failures.length > 0) throw failures[0];
}

/**
 * Polls `condition` until it holds (or fails after `timeoutMs`, stretched by the suite's timeout
 * scale, `KOSONG_TEST_TIMEOUT_SCALE`, which test-support sets from the machine's load).
 */
export async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs * (Number(process.env.KOSONG_TEST_TIMEOUT_SCALE) || 1);
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/** What happened to one call on a {@link ProbeToolset}. */
export interface ProbeRecord {
  readonly call: ToolCall;
  readonly stepId: string;
  readonly index: number | undefined;
  abortedAt: number | undefined;
  finishedAt: number | undefined;
}

/**
 * A local toolset whose tools show what happened: `echo` returns its arguments; `sleep` waits
 * `ms` and honours its signal (settling `settleMs` after the abort); `stubborn` ignores its signal.
 */
export class ProbeToolset implements Toolset {
  readonly records: ProbeRecord[] = [];
  readonly tools: readonly Tool[] = [
    { name: 'echo', description: 'Returns its arguments.', parameters: { type: 'object' } },
    { name: 'sleep', description: 'Waits ms milliseconds.', parameters: { type: 'object', properties: { ms: { type: 'number' } } } },
    { name: 'stubborn', description: 'Waits ms milliseconds, whatever happens.', parameters: { type: 'object' } },
  ];

  constructor(private readonly settleMs = 0) {}

  handle(call: ToolCall, context: ToolContext): Promise<ToolResult> | ToolResult {
    const record: ProbeRecord = { call, stepId: context.stepId, index: context.index, abortedAt: undefined, finishedAt: undefined };
    this.records.push(record);
    const args = JSON.parse(call.function.arguments ?? '{}') as { ms?: number };
    const done = (output: string): ToolResult => {
      record.finishedAt = Date.now();
      return { toolCallId: call.id, returnValue: toolOk({ output }) };
    };
    switch (call.function.name) {
      case 'echo':
        return done(call.function.arguments ?? '');
      case 'sleep':
        return new Promise((resolve) => {
          const timer = setTimeout(() => resolve(done(`slept ${args.ms}`)), args.ms ?? 0);
          context.signal.addEventListener('abort', () => {
            record.abortedAt = Date.now();
            clearTimeout(timer);
            setTimeout(() => {
              record.finishedAt = Date.now();
              resolve({ toolCallId: call.id, returnValue: toolCancelled('sleep', context.signal.reason) });
            }, this.settleMs);
          });
        });
      case 'stubborn':
        context.signal.addEventListener('abort', () => void (record.abortedAt = Date.now()));
        return sleep(args.ms ?? 0).then(() => done('done anyway'));
      default:
        return { toolCallId: call.id, returnValue: toolNotFound(call.function.name) };
    }
  }
}

/** A tool call. */
export function call(id: string, name: string, args: unknown = {}): ToolCall {
  return { type: 'function', id, function: { name, arguments: JSON.stringify(args) } };
}
