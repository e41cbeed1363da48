import { createServer } from 'node:net';

import { createMessage, type Message, type StreamedMessage, type StreamedMessagePart } from '@kosong/core';
import { expect } from 'chai';

import { GeminiChatProvider, type GeminiChatProviderOptions } from '../index.js';
import { GeminiServer } from '../testing/index.js';

/** An API key for tests: long enough to be redacted, and not of Google's key shape. */
export const TEST_KEY = 'gemini-test-key-0123456789abcdef';

/** A test server started before each test and closed after it. */
export function useServer(): { readonly server: GeminiServer; provider(options?: Partial<GeminiChatProviderOptions>): GeminiChatProvider } {
  const holder = {
    server: undefined as unknown as GeminiServer,
    provider(options: Partial<GeminiChatProviderOptions> = {}): GeminiChatProvider {
      return new GeminiChatProvider({ baseURL: holder.server.url, apiKey: TEST_KEY, model: 'gemini-2.5-flash', ...options });
    },
  };
  beforeEach(async () => {
    holder.server = await GeminiServer.start();
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

/** How the exchange ended for the server, or `open` if it has not within `ms`. */
export function closedWithin(closed: Promise<'completed' | 'aborted'>, ms = 2_000): Promise<string> {
  return Promise.race([closed, delay(ms).then(() => 'open')]);
}

/** A port nothing listens on. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Every string reachable from a value (own properties, `cause`, `message`, `stack`), for leak checks. */
export function reachableText(value: unknown, seen = new Set<unknown>()): string {
  if (typeof value === 'string') return value;
  if (typeof value !== 'object' || value === null || seen.has(value)) return '';
  seen.add(value);
  const texts: string[] = [];
  if (value instanceof Error) texts.push(value.message, value.stack ?? '', reachableText(value.cause, seen));
  for (const key of Reflect.ownKeys(value)) {
    let child: unknown;
    try {
      child = (value as Record<PropertyKey, unknown>)[key];
    } catch {
      continue;
    }
    texts.push(reachableText(child, seen));
  }
  return texts.join('\n');
}
