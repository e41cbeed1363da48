/**
 * The workload of the `openai` suite: the `step` suite's response (100,000 text deltas and 100 tool
 * calls, one after every 1,000 deltas, arguments in 3 fragments) as a streamed Chat Completions
 * response: one chunk per text delta, one per argument fragment (the first with the call's id and
 * name, `index` counting the calls), then the finish reason and the usage.
 *
 * @module
 */
import type { StreamedMessagePart } from '@kosong/core';
import { completionChunk, toolCallChunk, usageChunk, type StreamReply } from '@kosong/provider-openai/testing';
import { argumentFragments, callArguments, callId, DELTA, DELTAS_PER_CALL, TEXT_DELTAS, TEXT_LENGTH, TOOL_CALLS, TOOL_NAME } from '../step/workload.js';

export { DELTA, TEXT_DELTAS, TEXT_LENGTH, TOOL_CALLS };

/** The length of all tool-call arguments of the response, joined. */
export const ARGUMENTS_LENGTH = Array.from({ length: TOOL_CALLS }, (_, i) => callArguments(i).length).reduce((a, b) => a + b, 0);

/** The whole response, as the server sends it. */
export function workloadReply(): StreamReply {
  const chunks: object[] = [completionChunk({ delta: { role: 'assistant', content: '' } })];
  for (let call = 0; call < TOOL_CALLS; call++) {
    for (let d = 0; d < DELTAS_PER_CALL; d++) chunks.push(completionChunk({ delta: { content: DELTA } }));
    argumentFragments(call).forEach((fragment, i) => {
      const first = i === 0;
      chunks.push(toolCallChunk(first ? { index: call, id: callId(call), type: 'function', function: { name: TOOL_NAME, arguments: fragment } } : { index: call, function: { arguments: fragment } }));
    });
  }
  chunks.push(completionChunk({ delta: {}, finishReason: 'tool_calls' }), usageChunk({ prompt_tokens: 10, completion_tokens: TEXT_DELTAS }));
  return { type: 'stream', chunks };
}

/** What a variant counted while reading the response. */
export interface Counts {
  readonly textChars: number;
  readonly toolCalls: number;
  readonly argumentChars: number;
}

/** Reads a provider's stream of parts to its end, counting text, calls and argument characters. */
export async function countParts(stream: AsyncIterable<StreamedMessagePart>): Promise<Counts> {
  let textChars = 0;
  let toolCalls = 0;
  let argumentChars = 0;
  for await (const part of stream) {
    if (part.type === 'text') textChars += part.text.length;
    else if (part.type === 'function') {
      toolCalls++;
      argumentChars += part.function.arguments?.length ?? 0;
    } else if (part.type === 'tool_call_part') argumentChars += part.argumentsPart?.length ?? 0;
  }
  return { textChars, toolCalls, argumentChars };
}

/** Throws unless the counts are those of the whole workload. */
export function verifyCounts(label: string, counts: Counts): void {
  const expected: Counts = { textChars: TEXT_LENGTH, toolCalls: TOOL_CALLS, argumentChars: ARGUMENTS_LENGTH };
  if (JSON.stringify(counts) !== JSON.stringify(expected)) throw new Error(`${label}: read ${JSON.stringify(counts)}, expected ${JSON.stringify(expected)}`);
}
