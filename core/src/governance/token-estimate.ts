/**
 * The estimate of a request's tokens that `tokensPerMinute` counts before the step (the provider's
 * real `TokenUsage` corrects it when the step ends).
 *
 * @module
 */
import type { Message } from '../message/message.js';
import type { Tool } from '../tooling/tool.js';

/** Characters per token of the estimate: the usual rule of thumb for English text and JSON. */
export const CHARS_PER_TOKEN = 4;

/** What an image, audio or video part counts for (its URL, often a data URL, says nothing of its tokens). */
export const MEDIA_PART_TOKENS = 256;

const toolChars = new WeakMap<readonly Tool[], number>();

/**
 * Estimates the input tokens of a request: its characters / {@link CHARS_PER_TOKEN}, rounded up —
 * the system prompt, each message's text and thinking, its tool calls' names and arguments, and the
 * tools' names, descriptions and JSON-Schema parameters (counted once per tools array) — plus
 * {@link MEDIA_PART_TOKENS} per image, audio or video part. Output tokens are not estimated: they
 * are counted when the step ends. Cheap: one pass over the history, no serialisation of it.
 */
export function estimateRequestTokens(systemPrompt: string, tools: readonly Tool[], history: readonly Message[]): number {
  let chars = systemPrompt.length;
  let media = 0;
  let known = toolChars.get(tools);
  if (known === undefined) {
    known = 0;
    for (const tool of tools) known += tool.name.length + tool.description.length + JSON.stringify(tool.parameters ?? {}).length;
    toolChars.set(tools, known);
  }
  chars += known;
  for (const message of history) {
    for (const part of message.content) {
      if (part.type === 'text') chars += part.text.length;
      else if (part.type === 'think') chars += part.think.length;
      else media++;
    }
    if (message.toolCalls) for (const call of message.toolCalls) chars += call.function.name.length + (call.function.arguments?.length ?? 0);
  }
  return Math.ceil(chars / CHARS_PER_TOKEN) + media * MEDIA_PART_TOKENS;
}
