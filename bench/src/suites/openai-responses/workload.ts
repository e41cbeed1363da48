/**
 * The workload of the `openai-responses` suite: the `step` suite's response (100,000 text deltas
 * and 100 tool calls, one after every 1,000 deltas, arguments in 3 fragments) as a streamed
 * Responses API response: one assistant message item per run of 1,000 text deltas and one
 * function-call item per call, each with every event the API sends (items added and done, content
 * parts, text and argument deltas and their `.done` events), then `response.completed` with usage.
 *
 * @module
 */
import { responseEvents, type OutputItemScript, type StreamReply } from '@kosong/provider-openai/testing';
import { argumentFragments, callId, DELTA, DELTAS_PER_CALL, TEXT_DELTAS, TOOL_CALLS, TOOL_NAME } from '../step/workload.js';

export { ARGUMENTS_LENGTH, countParts, verifyCounts, type Counts } from '../openai/workload.js';

/** The whole response, as the server sends it. */
export function workloadReply(): StreamReply {
  const items: OutputItemScript[] = [];
  for (let call = 0; call < TOOL_CALLS; call++) {
    items.push({ type: 'message', text: Array.from({ length: DELTAS_PER_CALL }, () => DELTA) });
    items.push({ type: 'function_call', callId: callId(call), name: TOOL_NAME, arguments: argumentFragments(call) });
  }
  return { type: 'stream', chunks: responseEvents(items, { id: 'resp_bench', usage: { input_tokens: 10, output_tokens: TEXT_DELTAS } }) };
}
