/**
 * Error results this toolset gives besides the spec's (core's `toolNotFound`, `toolParseError`,
 * `toolValidateError`, `toolRuntimeError`, `toolInvalidReturn`, `toolNotExecuted`).
 *
 * @module
 */
import { toolError, type ToolReturnValue } from '@kosong/core';
import { describeError, isToolResult, toolCancelled, toolNotExecuted } from '@kosong/core/toolset-kit';

/** The call ran longer than its timeout; its signal was aborted and its result is no longer awaited. */
export function toolTimedOut(toolName: string, timeoutMs: number): ToolReturnValue {
  return toolError({
    message: `Tool \`${toolName}\` timed out after ${timeoutMs} ms. You may try again with a smaller request, or tell the user the tool is slow.`,
    brief: `Timed out after ${timeoutMs} ms`,
  });
}

/** The step was aborted while the call ran: core's shared text (`Tool \`x\` was cancelled: …`). */
export const toolAborted = toolCancelled;

/** The step was aborted before the call started (while it waited for a free slot, or before it was handed over). */
export function toolAbortedBeforeStart(reason: unknown): ToolReturnValue {
  return toolNotExecuted(`the call was aborted before it started (${describeError(reason)})`);
}

/** What `execute` returned, if it is not a return value nor a string, for `Invalid return type: …`. */
export function describeReturnType(value: unknown): string {
  if (value === null) return 'null (expected a ToolReturnValue or a string)';
  if (Array.isArray(value)) return 'array (expected a ToolReturnValue or a string)';
  if (isToolResult(value)) return 'a ToolResult (return its returnValue: a ToolReturnValue, or a string)';
  if (typeof value === 'object') return 'object that is not a ToolReturnValue (expected a ToolReturnValue or a string)';
  return `${typeof value} (expected a ToolReturnValue or a string)`;
}
