import type { ContentPart, Message } from '@kosong/core';

import { isValidChatId } from './sessions.js';

/** A `useChat` request body, checked: the chat's id and the new user message. */
export interface ChatRequest {
  readonly chatId: string;
  /** The new user message: the last of the request's `messages`. */
  readonly message: Message;
}

/** Why a request body is not a `useChat` request. */
export class ChatRequestError extends Error {
  override readonly name = 'ChatRequestError';
}

/**
 * Reads a `useChat` request body (`{ id, messages, trigger, messageId }`, as `DefaultChatTransport`
 * sends it). Only the last message is read, and it must be a user message: the server keeps the
 * conversation, so the client's copy of the earlier messages is ignored, and a request that would
 * rewrite it — `trigger: 'regenerate-message'`, or a `messageId` (an edited message) — is refused.
 *
 * The user message's `text` parts become text; its `file` parts with an `image/`, `audio/` or
 * `video/` media type become image, audio or video parts (by their URL); any other part is refused.
 *
 * @throws ChatRequestError naming what is wrong.
 */
export function parseChatRequest(body: unknown): ChatRequest {
  if (!isRecord(body)) throw new ChatRequestError('the body must be a JSON object (a useChat request: id, messages, trigger)');
  const { id, messages, trigger, messageId } = body;
  if (!isValidChatId(id)) throw new ChatRequestError('id must be a chat id: 1 to 128 letters, digits, "_", "-" or "." (not first)');
  if (trigger !== undefined && trigger !== 'submit-message') {
    if (trigger === 'regenerate-message') throw new ChatRequestError('trigger "regenerate-message" is not supported: the server keeps the conversation, and a request never rewrites it');
    throw new ChatRequestError(`trigger must be "submit-message" (got ${JSON.stringify(trigger)})`);
  }
  if (messageId !== undefined && messageId !== null) throw new ChatRequestError('messageId (an edited message) is not supported: the server keeps the conversation, and a request never rewrites it');
  if (!Array.isArray(messages) || messages.length === 0) throw new ChatRequestError('messages must be a non-empty array');
  const last: unknown = messages[messages.length - 1];
  if (!isRecord(last) || last.role !== 'user') throw new ChatRequestError('the last of messages must be the new user message (role "user")');
  if (!Array.isArray(last.parts)) throw new ChatRequestError('the user message must have parts (an array)');
  const content: ContentPart[] = last.parts.map((part: unknown, index: number) => contentPart(part, index));
  if (content.length === 0) throw new ChatRequestError('the user message has no parts');
  return { chatId: id, message: { role: 'user', content } };
}

function contentPart(part: unknown, index: number): ContentPart {
  if (!isRecord(part)) throw new ChatRequestError(`parts[${index}] of the user message must be an object`);
  if (part.type === 'text') {
    if (typeof part.text !== 'string') throw new ChatRequestError(`parts[${index}].text of the user message must be a string`);
    return { type: 'text', text: part.text };
  }
  if (part.type === 'file') {
    const { mediaType, url } = part;
    if (typeof mediaType !== 'string' || typeof url !== 'string') throw new ChatRequestError(`parts[${index}] (a file) must have a mediaType and a url`);
    if (mediaType.startsWith('image/')) return { type: 'image_url', imageUrl: { url } };
    if (mediaType.startsWith('audio/')) return { type: 'audio_url', audioUrl: { url } };
    if (mediaType.startsWith('video/')) return { type: 'video_url', videoUrl: { url } };
    throw new ChatRequestError(`parts[${index}]: files of type ${JSON.stringify(mediaType)} are not supported (images, audio and video are)`);
  }
  throw new ChatRequestError(`parts[${index}] of the user message has a type that is not supported: ${JSON.stringify(part.type)} (text and file are)`);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
