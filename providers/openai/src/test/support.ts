import { createMessage, type Message, type StreamedMessage, type StreamedMessagePart } from '@kosong/core';
import { expect } from 'chai';

import { ChatCompletionsServer } from '../testing/index.js';

/** An API key for tests: long enough to be redacted. */
export const TEST_KEY = 'sk-test-key-0123456789abcdef';

/** A test server started before each test and closed after it. */
export function useServer(): { readonly server: ChatCompletionsServer } {
  const holder = {} as { server: ChatCompletionsServer };
  beforeEach(async () => {
    holder.server = await ChatCompletionsServer.start();
  });
  afterEach(async () => {
    await holder.server.close();
  });
  return holder;
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

/** A user message. */
export function user(text: string): Message {
  return createMessage('user', text);
}

/** Resolves after `ms`. */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Waits until `condition()` holds (polling), or fails after `timeoutMs`. */
export async function waitFor(condition: () => boolean, timeoutMs = 2_000): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) expect.fail('condition not met in time');
    await delay(5);
  }
}
