/**
 * The workload of the `anthropic` suite: the `step` suite's response (100,000 text deltas and 100
 * tool calls, one after every 1,000 deltas, arguments in 3 fragments) as a streamed Messages API
 * response: 100 text blocks of 1,000 `text_delta`s, each followed by a `tool_use` block whose input
 * comes in 3 `input_json_delta`s.
 *
 * @module
 */
import { blockEvents, messageDelta, messageStart, messageStop, type EventStreamReply, type SseEvent } from '@kosong/provider-anthropic/testing';
import { argumentFragments, callArguments, callId, DELTA, DELTAS_PER_CALL, TEXT_LENGTH, TOOL_CALLS, TOOL_NAME } from '../step/workload.js';

export { DELTA, TEXT_LENGTH, TOOL_CALLS };

/** The length of all tool-call arguments of the response, joined. */
export const ARGUMENTS_LENGTH = Array.from({ length: TOOL_CALLS }, (_, i) => callArguments(i).length).reduce((a, b) => a + b, 0);

/** The whole response, as the server sends it. */
export function workloadReply(): EventStreamReply {
  const events: SseEvent[] = [messageStart({ usage: { input_tokens: 10, output_tokens: 1 } })];
  let index = 0;
  for (let call = 0; call < TOOL_CALLS; call++) {
    events.push(...blockEvents(index++, { type: 'text', text: Array.from({ length: DELTAS_PER_CALL }, () => DELTA) }));
    events.push(...blockEvents(index++, { type: 'tool_use', id: callId(call), name: TOOL_NAME, input: argumentFragments(call) }));
  }
  events.push(messageDelta('tool_use', { output_tokens: TOOL_CALLS * DELTAS_PER_CALL }), messageStop());
  return { type: 'stream', events };
}

/** What a variant counted while reading the response. */
export interface Counts {
  readonly textChars: number;
  readonly toolCalls: number;
  readonly argumentChars: number;
}

/** Throws unless the counts are those of the whole workload. */
export function verifyCounts(label: string, counts: Counts): void {
  const expected: Counts = { textChars: TEXT_LENGTH, toolCalls: TOOL_CALLS, argumentChars: ARGUMENTS_LENGTH };
  if (JSON.stringify(counts) !== JSON.stringify(expected)) throw new Error(`${label}: read ${JSON.stringify(counts)}, expected ${JSON.stringify(expected)}`);
}
