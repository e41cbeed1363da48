/**
 * `ai-sdk`: the Vercel AI SDK's `streamText` (ai 7) over `MockLanguageModelV4` from `ai/test`,
 * streaming the same workload through `simulateReadableStream` with no delays. The whole
 * `fullStream` is consumed, then `result.text` and `result.toolResults` are awaited (the usage the
 * SDK documents).
 *
 * Note: reading a result promise after the stream was consumed makes the SDK replay the buffered
 * stream (`consumeStream` over a fresh `tee` branch). On Node 20 a web-stream queue dequeues with
 * `Array.prototype.shift`, so draining a 100k-part buffer keeps the process busy for seconds after
 * the promises resolved. The harness waits for the process to be idle after every run, so that work
 * shows in the CPU column and never slows the next run.
 *
 * @module
 */
import { jsonSchema, simulateReadableStream, streamText, tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import type { PreparedVariant } from '../../lib/harness.js';
import {
  argumentFragments,
  callArguments,
  callId,
  DELTA,
  DELTAS_PER_CALL,
  TEXT_DELTAS,
  TEXT_LENGTH,
  TOOL_CALLS,
  TOOL_NAME,
  TOOL_OUTPUT,
  toolParameters,
} from '../../lib/suites/step/workload.js';

/** A part of a LanguageModelV4 stream (taken from the mock, so `@ai-sdk/provider` need not be imported). */
type StreamPart = Awaited<ReturnType<MockLanguageModelV4['doStream']>>['stream'] extends ReadableStream<infer P> ? P : never;

/** The workload as LanguageModelV4 stream parts: text blocks and streamed tool inputs, then `finish`. */
function chunks(): StreamPart[] {
  const parts: StreamPart[] = [{ type: 'stream-start', warnings: [] }];
  for (let call = 0; call < TOOL_CALLS; call++) {
    const textId = `text_${call}`;
    parts.push({ type: 'text-start', id: textId });
    for (let d = 0; d < DELTAS_PER_CALL; d++) parts.push({ type: 'text-delta', id: textId, delta: DELTA });
    parts.push({ type: 'text-end', id: textId });
    const id = callId(call);
    parts.push({ type: 'tool-input-start', id, toolName: TOOL_NAME });
    for (const delta of argumentFragments(call)) parts.push({ type: 'tool-input-delta', id, delta });
    parts.push({ type: 'tool-input-end', id });
    parts.push({ type: 'tool-call', toolCallId: id, toolName: TOOL_NAME, input: callArguments(call) });
  }
  parts.push({
    type: 'finish',
    finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
    usage: {
      inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
      outputTokens: { total: TEXT_DELTAS, text: TEXT_DELTAS, reasoning: 0 },
    },
  });
  return parts;
}

interface Output {
  readonly text: string;
  readonly toolResults: readonly { readonly toolCallId: string; readonly output: unknown }[];
  readonly executed: number;
  readonly textDeltas: number;
  readonly toolResultParts: number;
  readonly errors: readonly unknown[];
}

export function prepare(): PreparedVariant<Output> {
  const parts = chunks();
  let executed = 0;
  const tools = {
    [TOOL_NAME]: tool({
      description: 'Does nothing.',
      inputSchema: jsonSchema<{ i: number }>(toolParameters()),
      execute: async () => {
        executed++;
        return TOOL_OUTPUT;
      },
    }),
  };
  return {
    async run() {
      executed = 0;
      const model = new MockLanguageModelV4({
        doStream: async () => ({ stream: simulateReadableStream({ chunks: parts, initialDelayInMs: null, chunkDelayInMs: null }) }),
      });
      const result = streamText({ model, system: 'You are a benchmark.', prompt: 'Go.', tools });
      let textDeltas = 0;
      let toolResultParts = 0;
      const errors: unknown[] = [];
      for await (const part of result.fullStream) {
        if (part.type === 'text-delta') textDeltas++;
        else if (part.type === 'tool-result') toolResultParts++;
        else if (part.type === 'error' || part.type === 'tool-error') errors.push(part);
      }
      const [text, toolResults] = await Promise.all([result.text, result.toolResults]);
      return { text, toolResults, executed, textDeltas, toolResultParts, errors };
    },
    verify(output) {
      if (output.errors.length > 0) throw new Error(`ai-sdk: stream errors: ${String(output.errors[0])}`);
      if (output.text.length !== TEXT_LENGTH) throw new Error(`ai-sdk: text length ${output.text.length}, expected ${TEXT_LENGTH}`);
      if (output.textDeltas !== TEXT_DELTAS) throw new Error(`ai-sdk: ${output.textDeltas} text deltas, expected ${TEXT_DELTAS}`);
      if (output.executed !== TOOL_CALLS) throw new Error(`ai-sdk: ${output.executed} tools executed, expected ${TOOL_CALLS}`);
      if (output.toolResults.length !== TOOL_CALLS || output.toolResultParts !== TOOL_CALLS) {
        throw new Error(`ai-sdk: ${output.toolResults.length} tool results (${output.toolResultParts} in the stream), expected ${TOOL_CALLS}`);
      }
      output.toolResults.forEach((toolResult, i) => {
        if (toolResult.toolCallId !== callId(i) || toolResult.output !== TOOL_OUTPUT) {
          throw new Error(`ai-sdk: result ${i} is ${JSON.stringify(toolResult)}`);
        }
      });
    },
  };
}
