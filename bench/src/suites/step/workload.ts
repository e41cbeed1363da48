/**
 * The workload of the `step` suite: one model response of {@link TEXT_DELTAS} text deltas and
 * {@link TOOL_CALLS} tool calls, one call (its arguments streamed in {@link argumentFragments})
 * after every {@link DELTAS_PER_CALL} text deltas. Every variant streams exactly this. Other suites
 * stream the same kind of response in other sizes (a {@link ResponseShape}: the growth grid, small
 * steps, concurrent steps).
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
  return responseParts(STEP_RESPONSE);
}

/** The size of a streamed response: its text deltas and tool calls. */
export interface ResponseShape {
  readonly textDeltas: number;
  readonly toolCalls: number;
}

/** The `step` suite's response. */
export const STEP_RESPONSE: ResponseShape = { textDeltas: TEXT_DELTAS, toolCalls: TOOL_CALLS };

/**
 * How the text deltas of a response are split around its calls: `runs[i]` deltas come before call i
 * (and the last entry after the last call). The deltas are spread evenly, the remainder first; a
 * response without calls is one run.
 */
export function textRuns(shape: ResponseShape): number[] {
  const slots = Math.max(shape.toolCalls, 1);
  const base = Math.floor(shape.textDeltas / slots);
  const extra = shape.textDeltas % slots;
  const runs = Array.from({ length: slots }, (_, i) => base + (i < extra ? 1 : 0));
  return shape.toolCalls === 0 ? runs : [...runs, 0];
}

/** A response of this shape as kosong parts: each run of text deltas, then a call and its argument fragments. */
export function responseParts(shape: ResponseShape): StreamedMessagePart[] {
  const parts: StreamedMessagePart[] = [];
  textRuns(shape).forEach((deltas, call) => {
    for (let d = 0; d < deltas; d++) parts.push(textPart(DELTA));
    if (call < shape.toolCalls) {
      parts.push(toolCall(callId(call), TOOL_NAME, null));
      for (const fragment of argumentFragments(call)) parts.push(toolCallPart(fragment));
    }
  });
  return parts;
}

/** How many parts a response of this shape streams. */
export function partCount(shape: ResponseShape): number {
  return shape.textDeltas + shape.toolCalls * (1 + argumentFragments(0).length);
}
