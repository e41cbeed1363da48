import type { ContentPart, ToolCall } from './parts.js';

/** Who said a message. OpenAI and Kimi accept `system` mid-conversation; providers convert it where they must. */
export type Role = 'system' | 'user' | 'assistant' | 'tool';

/** One message of a conversation. Plain readonly data. */
export interface Message {
  readonly role: Role;
  readonly content: readonly ContentPart[];
  /** The tool calls of an assistant message, in the order the model made them. */
  readonly toolCalls?: readonly ToolCall[];
  /** On a `tool` message: the id of the call it answers. */
  readonly toolCallId?: string;
  readonly name?: string;
  /** Set on a message that was cut short (e.g. a streamed message that was interrupted). */
  readonly partial?: boolean;
}

/** Fields of a {@link Message} other than its role and content. */
export type MessageExtras = Omit<Message, 'role' | 'content'>;

/**
 * Builds a message; a string content becomes one text part.
 *
 * @example createMessage('user', 'Hello!')
 */
export function createMessage(role: Role, content: string | ContentPart | readonly ContentPart[], extras: MessageExtras = {}): Message {
  const parts: readonly ContentPart[] =
    typeof content === 'string' ? [{ type: 'text', text: content }] : isPartArray(content) ? content : [content];
  return { role, content: parts, ...extras };
}

/**
 * The text of a message: its text parts joined by `separator`. Think parts and media are skipped;
 * nothing is trimmed.
 */
export function extractText(message: Message, separator = ''): string {
  const texts: string[] = [];
  for (const part of message.content) if (part.type === 'text') texts.push(part.text);
  return texts.join(separator);
}

function isPartArray(content: ContentPart | readonly ContentPart[]): content is readonly ContentPart[] {
  return Array.isArray(content);
}
