import { createMessage, type Message, type StreamedMessage, type StreamedMessagePart } from '@kosong/core';
import { expect } from 'chai';

import { AnthropicChatProvider, type AnthropicChatProviderOptions } from '../index.js';
import { MessagesServer } from '../testing/index.js';

/** An API key for tests: long enough to be redacted, shaped like a real one. */
export const TEST_KEY = 'sk-ant-test-key-0123456789abcdef';

/** A test server started before each test and closed after it. */
export function useServer(): { readonly server: MessagesServer } {
  const holder = {} as { server: MessagesServer };
  beforeEach(async () => {
    holder.server = await MessagesServer.start();
  });
  afterEach(async () => {
    await holder.server.close();
  });
  return holder;
}

/** A provider talking to `server`. */
export function providerFor(server: MessagesServer, options: Partial<AnthropicChatProviderOptions> = {}): AnthropicChatProvider {
  return new AnthropicChatProvider({ baseURL: server.url, apiKey: TEST_KEY, model: 'claude-sonnet-4-20250514', defaultMaxTokens: 1024, ...options });
}

/** Reads a stream to its end or its error: the parts seen and the error, if any. */
export async function drain(stream: StreamedMessage): Promise<{ parts: StreamedMessagePart[]; error: unknown }> {
  const parts: StreamedMessagePart[] = [];
  try {
    for await (const part of stream) parts.push(part);
    return { parts, error: undefined };
  } catch (error) {
    return { parts, error };
  }
}

/** Reads a whole stream; fails the test if it throws. */
export async function collect(stream: StreamedMessage): Promise<StreamedMessagePart[]> {
  const { parts, error } = await drain(stream);
  if (error !== undefined) throw error;
  return parts;
}

/** The rejection reason of a promise; fails the test if it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  expect.fail('expected the promise to reject');
}

/** The error `generate` + reading the stream end with; fails the test if both succeed. */
export async function streamFailure(provider: AnthropicChatProvider, history: readonly Message[] = [user('go')]): Promise<{ parts: StreamedMessagePart[]; error: unknown }> {
  const result = await drain(await provider.generate('', [], history));
  if (result.error === undefined) expect.fail(`expected the stream to fail; it gave ${JSON.stringify(result.parts)}`);
  return result;
}

/** A user message. */
export function user(text: string): Message {
  return createMessage('user', text);
}

/** Resolves after `ms`. */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
