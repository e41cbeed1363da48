import { createMessage, type Message, type StreamedMessage, type StreamedMessagePart } from '@kosong/core';
import { expect } from 'chai';

/** Reads a whole stream into an array. */
export async function collect(stream: StreamedMessage): Promise<StreamedMessagePart[]> {
  const parts: StreamedMessagePart[] = [];
  for await (const part of stream) parts.push(part);
  return parts;
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

/** The rejection reason of a promise; fails the test if it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  expect.fail('expected the promise to reject');
}

/** A user message holding a script. */
export function user(script: string): Message {
  return createMessage('user', script);
}

/** Joins lines with `\n`. */
export function lines(...text: string[]): string {
  return text.join('\n');
}
