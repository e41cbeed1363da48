/**
 * What the tests of the bridge share: models of each spec that stream given parts (the AI SDK's
 * own mock from `ai/test` (ai 6) for v3; for v4 and v2, plain objects of the spec written here, since
 * ai 7, whose `ai/test` mocks are v4, declares Node 22 and stays out of the root install), and
 * readers of streams.
 */
import type { LanguageModelV2, LanguageModelV2CallOptions, LanguageModelV2StreamPart, LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { createMessage, type Message, type StreamedMessage, type StreamedMessagePart } from '@kosong/core';
import { convertArrayToReadableStream, MockLanguageModelV3 } from 'ai/test';

import type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4GenerateResult, LanguageModelV4StreamPart, LanguageModelV4StreamResult } from '../spec-v4.js';

/** A usage of the v3/v4 specs. */
export const USAGE = {
  inputTokens: { total: 100, noCache: 70, cacheRead: 20, cacheWrite: 10 },
  outputTokens: { total: 30, text: 25, reasoning: 5 },
} as const;

/** A v4 `finish` part. */
export function finish(unified: 'stop' | 'tool-calls' | 'length' | 'content-filter' | 'error' | 'other' | 'interrupted' = 'stop'): LanguageModelV4StreamPart {
  return { type: 'finish', finishReason: { unified, raw: unified }, usage: USAGE };
}

/** A v4 text block of these deltas. */
export function textBlock(id: string, ...deltas: string[]): LanguageModelV4StreamPart[] {
  return [{ type: 'text-start', id }, ...deltas.map((delta) => ({ type: 'text-delta' as const, id, delta })), { type: 'text-end', id }];
}

/** A v4 streamed tool call: start, one delta per fragment, end, `tool-call`. */
export function streamedCall(id: string, toolName: string, ...fragments: string[]): LanguageModelV4StreamPart[] {
  return [
    { type: 'tool-input-start', id, toolName },
    ...fragments.map((delta) => ({ type: 'tool-input-delta' as const, id, delta })),
    { type: 'tool-input-end', id },
    { type: 'tool-call', toolCallId: id, toolName, input: fragments.join('') },
  ];
}

/** A v4 model of these tests: the spec's `LanguageModelV4`, with the options of each call recorded. */
export interface TestModelV4 extends LanguageModelV4 {
  readonly doStreamCalls: LanguageModelV4CallOptions[];
  readonly doGenerateCalls: LanguageModelV4CallOptions[];
}

/** A v4 model whose `doStream` is `doStream` (given the call's options and its index). */
export function modelWith(doStream: (options: LanguageModelV4CallOptions, index: number) => PromiseLike<LanguageModelV4StreamResult>, provider = 'mock.chat', modelId = 'mock-model'): TestModelV4 {
  const doStreamCalls: LanguageModelV4CallOptions[] = [];
  const doGenerateCalls: LanguageModelV4CallOptions[] = [];
  return {
    specificationVersion: 'v4',
    provider,
    modelId,
    supportedUrls: {},
    doStreamCalls,
    doGenerateCalls,
    doStream: (options) => {
      doStreamCalls.push(options);
      return doStream(options, doStreamCalls.length - 1);
    },
    // The bridge never calls it: a generation of the parts `doStream` would give, read in full.
    doGenerate: async (options) => {
      doGenerateCalls.push(options);
      const { stream } = await doStream(options, doGenerateCalls.length - 1);
      return generated(await readAll(stream));
    },
  };
}

/** A v4 model that streams `parts` (for each call, the next list of `calls`; none left: an empty stream). */
export function modelV4(...calls: readonly (readonly LanguageModelV4StreamPart[])[]): TestModelV4 {
  return modelWith(async (_options, index) => ({ stream: streamOf(calls[index] ?? []) }));
}

/** A readable stream of `parts`. */
export function streamOf<T>(parts: readonly T[]): ReadableStream<T> {
  return new ReadableStream<T>({
    start(controller) {
      for (const part of parts) controller.enqueue(part);
      controller.close();
    },
  });
}

async function readAll<T>(stream: ReadableStream<T>): Promise<T[]> {
  const parts: T[] = [];
  const reader = stream.getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) parts.push(read.value);
  return parts;
}

/** The `doGenerate` result of a v4 stream's parts: its text and whole tool calls, its finish. */
function generated(parts: readonly LanguageModelV4StreamPart[]): LanguageModelV4GenerateResult {
  const content: LanguageModelV4GenerateResult['content'] = [];
  let finishPart: Extract<LanguageModelV4StreamPart, { type: 'finish' }> | undefined;
  let warnings: LanguageModelV4GenerateResult['warnings'] = [];
  for (const part of parts) {
    if (part.type === 'text-delta') content.push({ type: 'text', text: part.delta });
    else if (part.type === 'tool-call') content.push(part);
    else if (part.type === 'stream-start') warnings = part.warnings;
    else if (part.type === 'finish') finishPart = part;
  }
  return {
    content,
    finishReason: finishPart?.finishReason ?? { unified: 'other', raw: undefined },
    usage: finishPart?.usage ?? { inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: undefined, text: undefined, reasoning: undefined } },
    warnings,
  };
}

/** A `MockLanguageModelV3` that streams `parts`. */
export function modelV3(...calls: readonly (readonly LanguageModelV3StreamPart[])[]): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    provider: 'mock.chat',
    modelId: 'mock-model-v3',
    doStream: calls.map((parts) => ({ stream: convertArrayToReadableStream([...parts]) })),
  });
}

/** A v2 model (`ai/test` has no mock of that spec any more): streams `parts`, records its calls. */
export function modelV2(parts: readonly LanguageModelV2StreamPart[]): LanguageModelV2 & { readonly doStreamCalls: LanguageModelV2CallOptions[] } {
  const doStreamCalls: LanguageModelV2CallOptions[] = [];
  return {
    specificationVersion: 'v2',
    provider: 'mock-v2.chat',
    modelId: 'mock-model-v2',
    supportedUrls: {},
    doStreamCalls,
    doGenerate: () => Promise.reject(new Error('not used')),
    doStream: (options) => {
      doStreamCalls.push(options);
      return Promise.resolve({ stream: convertArrayToReadableStream([...parts]) });
    },
  };
}

/** The history of one user message. */
export const GO: readonly Message[] = [createMessage('user', 'go')];

/** Reads a stream to its end or its error: the parts seen and the error, if any. */
export async function drain(stream: StreamedMessage): Promise<{ parts: StreamedMessagePart[]; error: unknown }> {
  const parts: StreamedMessagePart[] = [];
  const read = async (): Promise<void> => {
    for await (const part of stream) parts.push(part);
  };
  const error = await read().then(
    () => undefined,
    (failure: unknown) => failure,
  );
  return { parts, error };
}

/** Reads a whole stream; fails the test if it throws. */
export const collect = (stream: StreamedMessage): Promise<StreamedMessagePart[]> =>
  drain(stream).then(({ parts, error }) => (error === undefined ? parts : Promise.reject(error)));

/** The rejection of `promise` (an error if it resolves). */
export const rejection = (promise: PromiseLike<unknown>): Promise<unknown> =>
  Promise.resolve(promise).then(
    () => Promise.reject(new Error('expected a rejection')),
    (error: unknown) => error,
  );
