import { freezeJson, freezePart } from '../../message/freeze.js';
import type { Message } from '../../message/message.js';
import type { JsonValue } from '../../message/parts.js';
import type { ToolResult } from '../../tooling/tool-result.js';

/**
 * What a step made, frozen before a hook sees it — the message of `onStepEnd`, the result of
 * `onToolResult` — so that a hook can change nothing the step returns (`result.message`,
 * `toolResults()`). Only when a hook listens: without hooks nothing is frozen. What the caller gave
 * the step (its history, its tools) is passed as it is: freezing it would change the caller's own
 * objects, which a step never does.
 *
 * @module
 */

/** Freezes a message, its content parts and its tool calls (each level, whatever is frozen already). Returns the same object. */
export function freezeMessage(message: Message): Message {
  for (const part of message.content) freezePart(part);
  Object.freeze(message.content);
  if (message.toolCalls) {
    for (const call of message.toolCalls) freezePart(call);
    Object.freeze(message.toolCalls);
  }
  return Object.freeze(message);
}

/** Freezes a tool result and its return value (output parts, display blocks, extras). Returns the same object. */
export function freezeToolResult(result: ToolResult): ToolResult {
  const value = result.returnValue;
  if (typeof value.output !== 'string') {
    for (const part of value.output) freezePart(part);
    Object.freeze(value.output);
  }
  for (const block of value.display) freezeJson(block as unknown as JsonValue);
  Object.freeze(value.display);
  if (value.extras) freezeJson(value.extras);
  Object.freeze(value);
  return Object.freeze(result);
}
