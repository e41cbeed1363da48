/**
 * Helpers shared by the tests of this package.
 */
import { toolCall, type ToolCall, type ToolContext, type ToolResult, type Toolset } from '@kosong/core';

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

let nextId = 0;

/** A call of `name` with raw `args` (a fresh id each time unless given). */
export function call(name: string, args: string | null, id = `call-${++nextId}`): ToolCall {
  return toolCall(id, name, args);
}

/** A context for `handle`, with its own abort controller. */
export function contextFor(toolCall: ToolCall, controller = new AbortController()): ToolContext & { controller: AbortController } {
  return { signal: controller.signal, toolCall, stepId: 'step-1', controller };
}

/** Handles a call of `name` with `args` and awaits the result. */
export async function run(toolset: Toolset, name: string, args: string | null, controller?: AbortController): Promise<ToolResult> {
  const c = call(name, args);
  return toolset.handle(c, contextFor(c, controller));
}

/** Like {@link run}, but JSON-encodes `args`. */
export function runJson(toolset: Toolset, name: string, args: unknown, controller?: AbortController): Promise<ToolResult> {
  return run(toolset, name, JSON.stringify(args), controller);
}
