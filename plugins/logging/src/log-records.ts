/**
 * The fields of each log record the plugin writes, built from the step events. Pure functions; the
 * {@link StepLogger} picks levels, adds the step's bindings and scrubs everything.
 *
 * @module
 */
import {
  inputTokens,
  type CleanupEvent,
  type ContentPart,
  type HookErrorReport,
  type RetryEvent,
  type StepEndEvent,
  type StepStartEvent,
  type StreamedMessagePart,
  type ToolCall,
  type ToolCallEvent,
  type ToolResultEvent,
  type ToolReturnValue,
} from '@kosong/core';

/** The `event` field of every record, for filtering. */
export type LogEventName = 'step.start' | 'step.part' | 'tool.call' | 'tool.result' | 'step.end' | 'step.cleanup' | 'step.retry' | 'hook.error';

/** How much content (tool arguments, output, error messages) one field may carry, in characters. */
export const MAX_CONTENT_LENGTH = 2_000;

/** Fields of a log record (before scrubbing). */
export type LogFields = { readonly event: LogEventName } & Record<string, unknown>;

/** Cuts `text` to {@link MAX_CONTENT_LENGTH}. Only ever applied to text that was already scrubbed. */
export function truncateContent(text: string): string {
  return text.length > MAX_CONTENT_LENGTH ? `${text.slice(0, MAX_CONTENT_LENGTH)}…[${text.length - MAX_CONTENT_LENGTH} more]` : text;
}

/** An error as logged: an object (expanded by the scrubber), or `{ message }` for a thrown primitive. */
export function errorValue(error: unknown): unknown {
  return typeof error === 'object' && error !== null ? error : { message: String(error) };
}

/** `step.start`: how many messages of history the step starts with. */
export function stepStartFields(event: StepStartEvent): LogFields {
  return { event: 'step.start', messages: event.history.length };
}

/** `step.part`: the part's type and the length of its text or arguments, never the content itself. */
export function partFields(part: StreamedMessagePart): LogFields {
  return { event: 'step.part', partType: part.type, length: partLength(part) };
}

/**
 * `tool.call`: tool, call id, index, whether it was executed and the arguments' length; the arguments
 * themselves when `content` (a scrubbing function: text is scrubbed before it is cut, never after) is given.
 */
export function toolCallFields(event: ToolCallEvent, content: ((text: string) => string) | undefined): LogFields {
  const args = event.toolCall.function.arguments;
  const fields: Record<string, unknown> = {
    event: 'tool.call',
    tool: event.toolCall.function.name,
    toolCallId: event.toolCallId,
    index: event.index,
    executed: event.executed,
    argumentsLength: args?.length ?? 0,
  };
  if (content && args !== null) fields['arguments'] = truncateContent(content(args));
  return fields as LogFields;
}

/**
 * `tool.result`: tool, call id, duration, whether it failed and the output's length; the error
 * message of a failed call (scrubbed with `content`, then cut), and the output with `logContent`.
 */
export function toolResultFields(event: ToolResultEvent, content: (text: string) => string, logContent: boolean): LogFields {
  const value: ToolReturnValue = event.result.returnValue;
  const output = outputText(value.output);
  const fields: Record<string, unknown> = {
    event: 'tool.result',
    tool: event.toolCall.function.name,
    toolCallId: event.toolCallId,
    index: event.index,
    durationMs: roundMs(event.durationMs),
    isError: value.isError,
    outputLength: output.length,
  };
  if (value.isError) fields['message'] = truncateContent(content(value.message));
  if (logContent) fields['output'] = truncateContent(content(output));
  return fields as LogFields;
}

/** `step.end`: outcome (`completed`, `failed`, `aborted`), duration, tool call count; usage, finish reason and message id, or the error. */
export function stepEndFields(event: StepEndEvent): LogFields {
  const durationMs = roundMs(event.durationMs);
  const toolCalls = event.toolCalls.length;
  if (event.error !== undefined || event.message === undefined) {
    return { event: 'step.end', outcome: event.aborted ? 'aborted' : 'failed', durationMs, toolCalls, error: errorValue(event.error) };
  }
  const usage = event.usage;
  return {
    event: 'step.end',
    outcome: 'completed',
    durationMs,
    toolCalls,
    finishReason: event.finishReason ?? null,
    messageId: event.messageId ?? null,
    usage:
      usage === undefined
        ? null
        : {
            input: inputTokens(usage),
            output: usage.output,
            inputOther: usage.inputOther,
            inputCacheRead: usage.inputCacheRead,
            inputCacheCreation: usage.inputCacheCreation,
          },
  };
}

/** `step.cleanup`: whether running tools were aborted, and the calls that leaked. */
export function cleanupFields(event: CleanupEvent): LogFields {
  return { event: 'step.cleanup', cancelled: event.cancelled, leaked: event.leaked.map(callSummary) };
}

/** `step.retry`: the turn's step, the attempt that failed, the next one, the wait and the error. */
export function retryFields(event: RetryEvent): LogFields {
  return {
    event: 'step.retry',
    step: event.step,
    attempt: event.attempt,
    nextAttempt: event.nextAttempt,
    delayMs: roundMs(event.delayMs),
    error: errorValue(event.error),
  };
}

/** `hook.error`: the owner and name of the hook, how it failed, whether it was detached, the error. */
export function hookErrorFields(report: HookErrorReport): LogFields {
  const { plugin, hook, kind, detached } = report;
  return { event: 'hook.error', plugin, hook, kind, detached, error: errorValue(report.error) };
}

function callSummary(call: ToolCall): { tool: string; toolCallId: string } {
  return { tool: call.function.name, toolCallId: call.id };
}

/** The text of a tool's output; media parts as `[image_url]` and the like. */
function outputText(output: string | readonly ContentPart[]): string {
  if (typeof output === 'string') return output;
  return output.map((part) => (part.type === 'text' ? part.text : part.type === 'think' ? part.think : `[${part.type}]`)).join('');
}

function partLength(part: StreamedMessagePart): number {
  switch (part.type) {
    case 'text':
      return part.text.length;
    case 'think':
      return part.think.length;
    case 'function':
      return part.function.arguments?.length ?? 0;
    case 'tool_call_part':
      return part.argumentsPart?.length ?? 0;
    default:
      return 0;
  }
}

function roundMs(ms: number): number {
  return Math.round(ms * 100) / 100;
}
