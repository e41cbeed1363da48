/**
 * The workload of the `step` suite: one model response of {@link TEXT_DELTAS} text deltas and
 * {@link TOOL_CALLS} tool calls, one call (its arguments streamed in {@link argumentFragments})
 * after every {@link DELTAS_PER_CALL} text deltas. Every variant streams exactly this.
 *
 * @module
 */
import { textPart, toolCall, toolCallPart, type StreamedMessagePart } from '@kosong/core';

export const TEXT_DELTAS = 100_000;
export const TOOL_CALLS = 100;
export const DELTAS_PER_CALL = TEXT_DELTAS / TOOL_CALLS;
/** The text of every delta. */
export const DELTA = 'tok ';
/** The length of the whole text of the response. */
export const TEXT_LENGTH = TEXT_DELTAS * DELTA.length;
/** The name of the only tool. */
export const TOOL_NAME = 'noop';
/** The JSON Schema of the tool's arguments (a fresh object each call). */
export function toolParameters() {
  return { type: 'object' as const, properties: { i: { type: 'number' as const } }, required: ['i'] };
}
/** What the tool returns. */
export const TOOL_OUTPUT = 'ok';

/** The id of the i-th tool call. */
export function callId(i: number): string {
  return `call_${i}`;
}

/** The streamed fragments of the i-th call's arguments; they join to `{"i":<i>}`. */
export function argumentFragments(i: number): readonly string[] {
  return ['{"i":', String(i), '}'];
}

/** The complete JSON arguments of the i-th call. */
export function callArguments(i: number): string {
  return argumentFragments(i).join('');
}

/** The workload as kosong parts: text deltas, then a tool call and its argument fragments, repeated. */
export function kosongParts(): StreamedMessagePart[] {
  const parts: StreamedMessagePart[] = [];
  for (let call = 0; call < TOOL_CALLS; call++) {
    for (let d = 0; d < DELTAS_PER_CALL; d++) parts.push(textPart(DELTA));
    parts.push(toolCall(callId(call), TOOL_NAME, null));
    for (const fragment of argumentFragments(call)) parts.push(toolCallPart(fragment));
  }
  return parts;
}
