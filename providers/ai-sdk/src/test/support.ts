/**
 * What the tests of the bridge share: models of each spec that stream given parts (the AI SDK's
 * own mocks from `ai/test` for v3 and v4, a plain object for v2), and readers of streams.
 */
import type { LanguageModelV2, LanguageModelV2CallOptions, LanguageModelV2StreamPart, LanguageModelV3StreamPart, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { createMessage, type Message, type StreamedMessage, type StreamedMessagePart } from '@kosong/core';
import { convertArrayToReadableStream, MockLanguageModelV3, MockLanguageModelV4 } from 'ai/test';

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

/** A `MockLanguageModelV4` that streams `parts` (for each call, the next list of `calls`). */
export function modelV4(...calls: readonly (readonly LanguageModelV4StreamPart[])[]): MockLanguageModelV4 {
  return new MockLanguageModelV4({
    provider: 'mock.chat',
    modelId: 'mock-model',
    doStream: calls.map((parts) => ({ stream: convertArrayToReadableStream([...parts]) })),
  });
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

/** A model of this spec whose `doStream` is `doStream`. */
export function modelWith(doStream: MockLanguageModelV4['doStream']): MockLanguageModelV4 {
  return new MockLanguageModelV4({ provider: 'mock.chat', modelId: 'mock-model', doStream });
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
