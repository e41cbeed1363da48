/**
 * The workload of the `ai-sdk` suite: one streamed Chat Completions response of
 * {@link AI_SDK_RESPONSE}'s text deltas and 100 tool calls (spread evenly, arguments in 3 fragments,
 * as in the `step` suite), then the finish reason and the usage, served by a local server in its own
 * process; and what the variants count of it.
 *
 * @module
 */
import { completionChunk, toolCallChunk, usageChunk, type StreamReply } from '@kosong/provider-openai/testing';
import type { Counts } from '../openai/workload.js';
import { argumentFragments, callArguments, callId, DELTA, textRuns, TOOL_NAME, type ResponseShape } from '../step/workload.js';

export { countParts, type Counts } from '../openai/workload.js';

/**
 * 10,000 text deltas and 100 tool calls: one `streamText` run of the AI SDK over it takes about a
 * second, so that its processes (one run each) stay short.
 */
export const AI_SDK_RESPONSE: ResponseShape = { textDeltas: 10_000, toolCalls: 100 };

/** The counts of the whole response. */
export const EXPECTED: Counts = {
  textChars: AI_SDK_RESPONSE.textDeltas * DELTA.length,
  toolCalls: AI_SDK_RESPONSE.toolCalls,
  argumentChars: Array.from({ length: AI_SDK_RESPONSE.toolCalls }, (_, i) => callArguments(i).length).reduce((a, b) => a + b, 0),
};

/** The response as the server sends it: a chunk per text delta and per argument fragment. */
export function workloadReply(shape: ResponseShape = AI_SDK_RESPONSE): StreamReply {
  const chunks: object[] = [completionChunk({ delta: { role: 'assistant', content: '' } })];
  textRuns(shape).forEach((deltas, call) => {
    for (let d = 0; d < deltas; d++) chunks.push(completionChunk({ delta: { content: DELTA } }));
    if (call >= shape.toolCalls) return;
    argumentFragments(call).forEach((fragment, i) =>
      chunks.push(toolCallChunk(i === 0 ? { index: call, id: callId(call), type: 'function', function: { name: TOOL_NAME, arguments: fragment } } : { index: call, function: { arguments: fragment } })),
    );
  });
  chunks.push(completionChunk({ delta: {}, finishReason: 'tool_calls' }), usageChunk({ prompt_tokens: 10, completion_tokens: shape.textDeltas }));
  return { type: 'stream', chunks };
}

/** Throws unless `counts` are those of the whole response. */
export function checkCounts(label: string, counts: Counts): void {
  if (JSON.stringify(counts) !== JSON.stringify(EXPECTED)) throw new Error(`${label}: read ${JSON.stringify(counts)}, expected ${JSON.stringify(EXPECTED)}`);
}
