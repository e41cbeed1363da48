/**
 * Helpers of the fallback's tests: local Chat Completions servers (real HTTP on 127.0.0.1), a real
 * `OpenAIChatProvider` on each, a port nobody listens on, and stream readers.
 */
import { createServer } from 'node:http';

import { createMessage, toolOk, type Message, type StreamedMessage, type StreamedMessagePart, type ToolCall, type ToolContext, type ToolResult, type Toolset } from '@kosong/core';
import { OpenAIChatProvider } from '@kosong/provider-openai';
import { ChatCompletionsServer, type JsonReply } from '@kosong/provider-openai/testing';
import { expect } from 'chai';

/** An API key for tests: long enough to be redacted. */
export const TEST_KEY = 'sk-test-key-0123456789abcdef';

/** Two servers (primary and secondary) started before each test and closed after it. */
export function useServers(): { readonly primary: ChatCompletionsServer; readonly secondary: ChatCompletionsServer } {
  const holder = {} as { primary: ChatCompletionsServer; secondary: ChatCompletionsServer };
  beforeEach(async () => {
    holder.primary = await ChatCompletionsServer.start();
    holder.secondary = await ChatCompletionsServer.start();
  });
  afterEach(async () => {
    await Promise.all([holder.primary.close(), holder.secondary.close()]);
  });
  return holder;
}

/** A real OpenAI Chat Completions provider on `baseURL` (the SDK retries nothing by itself). */
export function openai(baseURL: string, model: string, options: { readonly timeoutMs?: number } = {}): OpenAIChatProvider {
  return new OpenAIChatProvider({ baseURL, apiKey: TEST_KEY, model, ...options });
}

/** A JSON error reply of `status`. */
export function statusReply(status: number, message = `status ${status}`, headers: Readonly<Record<string, string>> = {}): JsonReply {
  return { type: 'json', status, body: { error: { message, type: 'server_error' } }, headers };
}

/** A port on 127.0.0.1 nobody listens on (a connection to it is refused). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
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

/** The text of parts. */
export function textOf(parts: readonly StreamedMessagePart[]): string {
  return parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
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

/** Whether `promise` settles within `ms`: its value, or `'open'`. */
export async function within<T>(promise: Promise<T>, ms = 2_000): Promise<T | 'open'> {
  let timer: NodeJS.Timeout | undefined;
  const open = new Promise<'open'>((resolve) => (timer = setTimeout(() => resolve('open'), ms)));
  try {
    return await Promise.race([promise, open]);
  } finally {
    clearTimeout(timer);
  }
}

/** A toolset with one tool, `add`, that records each call it runs and answers `sum of <args>`. */
export function recordingToolset(): Toolset & { readonly ran: ToolCall[] } {
  const ran: ToolCall[] = [];
  return {
    ran,
    tools: [{ name: 'add', description: 'Adds two numbers.', parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } } }],
    handle(call: ToolCall, _context: ToolContext): ToolResult {
      ran.push(call);
      return { toolCallId: call.id, returnValue: toolOk({ output: `sum of ${call.function.arguments ?? ''}` }) };
    },
  };
}
