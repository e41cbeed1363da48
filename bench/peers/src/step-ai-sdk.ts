/**
 * `ai-sdk`: the Vercel AI SDK's `streamText` (ai 7) over `MockLanguageModelV4` from `ai/test`,
 * streaming the same workload through `simulateReadableStream` with no delays. The `fullStream` is
 * consumed **once**: the text is joined from its `text-delta` parts and the tool results are taken
 * from its `tool-result` parts, as an application that renders the stream does. `result.text` and
 * `result.toolResults` are not awaited: after the stream was consumed, reading them makes the SDK
 * replay its buffered stream through a fresh `tee` branch (on Node 20 a web-stream queue dequeues
 * with `Array.prototype.shift`, so draining a 100k-part buffer took seconds), which no other variant
 * pays for.
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
  STEP_RESPONSE,
  textRuns,
  TOOL_NAME,
  TOOL_OUTPUT,
  toolParameters,
  type ResponseShape,
} from '../../lib/suites/step/workload.js';

/** A part of a LanguageModelV4 stream (taken from the mock, so `@ai-sdk/provider` need not be imported). */
type StreamPart = Awaited<ReturnType<MockLanguageModelV4['doStream']>>['stream'] extends ReadableStream<infer P> ? P : never;

/** The workload as LanguageModelV4 stream parts: text blocks and streamed tool inputs, then `finish`. */
function chunks(shape: ResponseShape): StreamPart[] {
  const parts: StreamPart[] = [{ type: 'stream-start', warnings: [] }];
  textRuns(shape).forEach((deltas, call) => {
    if (deltas > 0) {
      const textId = `text_${call}`;
      parts.push({ type: 'text-start', id: textId });
      for (let d = 0; d < deltas; d++) parts.push({ type: 'text-delta', id: textId, delta: DELTA });
      parts.push({ type: 'text-end', id: textId });
    }
    if (call < shape.toolCalls) {
      const id = callId(call);
      parts.push({ type: 'tool-input-start', id, toolName: TOOL_NAME });
      for (const delta of argumentFragments(call)) parts.push({ type: 'tool-input-delta', id, delta });
      parts.push({ type: 'tool-input-end', id });
      parts.push({ type: 'tool-call', toolCallId: id, toolName: TOOL_NAME, input: callArguments(call) });
    }
  });
  parts.push({
    type: 'finish',
    finishReason: shape.toolCalls > 0 ? { unified: 'tool-calls', raw: 'tool_calls' } : { unified: 'stop', raw: 'stop' },
    usage: {
      inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
      outputTokens: { total: shape.textDeltas, text: shape.textDeltas, reasoning: 0 },
    },
  });
  return parts;
}

interface Output {
  readonly text: string;
  readonly toolResults: readonly { readonly toolCallId: string; readonly output: unknown }[];
  readonly executed: number;
  readonly textDeltas: number;
  readonly errors: readonly unknown[];
}

/** The `step` suite's response. */
export function prepare(): PreparedVariant<Output> {
  return prepareAiSdk(STEP_RESPONSE);
}

/** A response of this shape through `streamText`, its full stream consumed once. */
export function prepareAiSdk(shape: ResponseShape): PreparedVariant<Output> {
  const parts = chunks(shape);
  const textLength = shape.textDeltas * DELTA.length;
  const calls = shape.toolCalls;
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
      const deltas: string[] = [];
      const toolResults: { readonly toolCallId: string; readonly output: unknown }[] = [];
      const errors: unknown[] = [];
      for await (const part of result.fullStream) {
        if (part.type === 'text-delta') deltas.push(part.text);
        else if (part.type === 'tool-result') toolResults.push({ toolCallId: part.toolCallId, output: part.output });
        else if (part.type === 'error' || part.type === 'tool-error') errors.push(part);
      }
      return { text: deltas.join(''), toolResults, executed, textDeltas: deltas.length, errors };
    },
    verify(output) {
      if (output.errors.length > 0) throw new Error(`ai-sdk: stream errors: ${String(output.errors[0])}`);
      if (output.text.length !== textLength) throw new Error(`ai-sdk: text length ${output.text.length}, expected ${textLength}`);
      if (output.textDeltas !== shape.textDeltas) throw new Error(`ai-sdk: ${output.textDeltas} text deltas, expected ${shape.textDeltas}`);
      if (output.executed !== calls) throw new Error(`ai-sdk: ${output.executed} tools executed, expected ${calls}`);
      if (output.toolResults.length !== calls) throw new Error(`ai-sdk: ${output.toolResults.length} tool results in the stream, expected ${calls}`);
      output.toolResults.forEach((toolResult, i) => {
        if (toolResult.toolCallId !== callId(i) || toolResult.output !== TOOL_OUTPUT) {
          throw new Error(`ai-sdk: result ${i} is ${JSON.stringify(toolResult)}`);
        }
      });
    },
  };
}
