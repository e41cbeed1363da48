/**
 * The error return values every toolset gives for calls that cannot run, with the texts of the
 * original kosong (spec §5.4), so models trained on them read them the same way.
 *
 * @module
 */
import { toolError, type ToolReturnValue } from './tool-result.js';

/** The model called a tool that does not exist. */
export function toolNotFound(toolName: string): ToolReturnValue {
  const text = `Tool \`${toolName}\` not found`;
  return toolError({ message: text, brief: text });
}

/** The arguments were not JSON. */
export function toolParseError(detail: string): ToolReturnValue {
  return toolError({ message: `Error parsing JSON arguments: ${detail}`, brief: 'Invalid arguments' });
}

/** The arguments were JSON but did not match the tool's schema. */
export function toolValidateError(detail: string): ToolReturnValue {
  return toolError({ message: `Error validating JSON arguments: ${detail}`, brief: 'Invalid arguments' });
}

/** The tool threw. */
export function toolRuntimeError(detail: string): ToolReturnValue {
  return toolError({ message: `Error running tool: ${detail}`, brief: 'Tool runtime error' });
}

/** The tool returned something that is not a return value. */
export function toolInvalidReturn(got: string): ToolReturnValue {
  return toolError({ message: `Invalid return type: ${got}`, brief: 'Invalid return type' });
}

/** The runtime did not run (or stopped) the call; `reason` says why, for the model. */
export function toolNotExecuted(reason: string): ToolReturnValue {
  return toolError({ message: `Tool call was not executed: ${reason}`, brief: 'Not executed' });
}

/** An approval handler denied the call; `reason` (if any) is for the model. */
export function toolDenied(reason?: string): ToolReturnValue {
  const message = reason ? `The tool call was denied: ${reason}` : 'The tool call was denied by the user. Do not try it again unless the user asks for it.';
  return toolError({ message, brief: 'Denied' });
}

/** The call needed approval and the decision was deferred: it has not run (yet). */
export function toolAwaitingApproval(): ToolReturnValue {
  return toolError({ message: 'Tool call was not executed: it is waiting for approval', brief: 'Awaiting approval' });
}

/**
 * The call started before and was interrupted (a crash, a lost worker, an abort) before its outcome
 * was recorded: it may have run, in part or in full, and was not run again (its replay policy is
 * `'never'`).
 */
export function toolInterrupted(): ToolReturnValue {
  return toolError({
    message:
      'Tool call was interrupted: it started, but its outcome was never recorded (the process running it stopped or the step was aborted), ' +
      'so it may have run, in part or in full. It was not run again. Check its effects before you call it again.',
    brief: 'Interrupted',
  });
}

/** The start of a call could not be recorded in the call ledger, so it was not run (`detail` says why). */
export function toolNotRecorded(detail: string): ToolReturnValue {
  return toolNotExecuted(`its start could not be recorded in the call ledger (${detail})`);
}

/** The step was aborted while the call ran (every toolset gives the model this same text). */
export function toolCancelled(toolName: string, reason: unknown): ToolReturnValue {
  return toolError({ message: `Tool \`${toolName}\` was cancelled: ${describeError(reason)}`, brief: 'Cancelled' });
}

/**
 * The call ran out of its time budget (`timeouts.toolCallMs`, `limitMs`) and was aborted through its
 * signal; whatever it did after that is not its result.
 */
export function toolTimedOut(toolName: string, limitMs: number): ToolReturnValue {
  return toolError({
    message: `Tool \`${toolName}\` timed out: it ran longer than its time budget (toolCallMs: ${limitMs}) and was aborted. Its effects may be incomplete.`,
    brief: 'Timeout',
  });
}

/** The text of a thrown value, for an error result. Never throws, whatever was thrown. */
export function describeError(error: unknown): string {
  try {
    if (typeof error === 'string') return error;
    if (error instanceof Error || isErrorLike(error)) return error.message || error.name;
    try {
      const json = JSON.stringify(error);
      if (json !== undefined) return json;
    } catch {
      // not JSON-serialisable (circular, BigInt…): fall back to String()
    }
    return String(error);
  } catch {
    return Object.prototype.toString.call(error);
  }
}

/** An error from another realm (e.g. a `vm` context) fails `instanceof Error` but has the shape. */
function isErrorLike(value: unknown): value is Error {
  return typeof value === 'object' && value !== null && typeof (value as Error).message === 'string' && typeof (value as Error).name === 'string';
}
