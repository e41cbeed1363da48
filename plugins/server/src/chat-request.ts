import type { ContentPart, Message } from '@kosong/core';

import { isValidChatId } from './sessions.js';

/**
 * A `useChat` request body, checked: a new user message to a chat, or the client's answers to the
 * calls that wait for approval in it.
 */
export type ChatRequest = ChatMessageRequest | ChatApprovalRequest;

/** A new user message to chat `chatId`. */
export interface ChatMessageRequest {
  readonly kind: 'message';
  readonly chatId: string;
  /** The new user message: the last of the request's `messages`. */
  readonly message: Message;
}

/**
 * The approval answers of a `useChat` client (`addToolApprovalResponse`, then a `submit-message`
 * whose last message is the assistant message with tool parts in state `approval-responded`).
 */
export interface ChatApprovalRequest {
  readonly kind: 'approval';
  readonly chatId: string;
  /** The id of the assistant message the answers are in (the client continues it). */
  readonly messageId: string;
  /** Each answered call: its `approvalId`, and the answer. */
  readonly responses: readonly ApprovalResponse[];
}

/** One answer of a {@link ChatApprovalRequest}. */
export interface ApprovalResponse {
  readonly approvalId: string;
  readonly approved: boolean;
  /** Why (for a denial: what the model is told). */
  readonly reason?: string;
}

/** Why a request body is not a `useChat` request. */
export class ChatRequestError extends Error {
  override readonly name = 'ChatRequestError';
}

/**
 * Reads a `useChat` request body (`{ id, messages, trigger, messageId }`, as `DefaultChatTransport`
 * sends it). Only the last message is read: the server keeps the conversation, so the client's copy
 * of the earlier messages is ignored, and a request that would rewrite it — `trigger:
 * 'regenerate-message'`, or a `messageId` of a user message (an edited message) — is refused.
 *
 * The last message is either the new user message, or the assistant message whose tool parts the
 * client answered (`state: 'approval-responded'`, `approval: { id, approved, reason }`); then
 * `messageId`, if given, is that message's id.
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
  if (!Array.isArray(messages) || messages.length === 0) throw new ChatRequestError('messages must be a non-empty array');
  const last: unknown = messages[messages.length - 1];
  if (isRecord(last) && last.role === 'assistant') return approvalRequest(id, last, messageId);
  if (messageId !== undefined && messageId !== null) throw new ChatRequestError('messageId (an edited message) is not supported: the server keeps the conversation, and a request never rewrites it');
  if (!isRecord(last) || last.role !== 'user') throw new ChatRequestError('the last of messages must be the new user message (role "user"), or an assistant message with approval responses');
  if (!Array.isArray(last.parts)) throw new ChatRequestError('the user message must have parts (an array)');
  const content: ContentPart[] = last.parts.map((part: unknown, index: number) => contentPart(part, index));
  if (content.length === 0) throw new ChatRequestError('the user message has no parts');
  return { kind: 'message', chatId: id, message: { role: 'user', content } };
}

/** The approval answers in the client's assistant message (its tool parts in state `approval-responded`). */
function approvalRequest(chatId: string, message: Record<string, unknown>, messageId: unknown): ChatApprovalRequest {
  const id = message.id;
  if (typeof id !== 'string' || id === '') throw new ChatRequestError('the assistant message must have an id');
  if (messageId !== undefined && messageId !== null && messageId !== id) throw new ChatRequestError('messageId must be the id of the last message (the assistant message with the approval responses)');
  if (!Array.isArray(message.parts)) throw new ChatRequestError('the assistant message must have parts (an array)');
  const responses: ApprovalResponse[] = [];
  const seen = new Set<string>();
  message.parts.forEach((part: unknown, index: number) => {
    if (!isRecord(part) || part.state !== 'approval-responded') return;
    const approval = part.approval;
    if (!isRecord(approval) || typeof approval.id !== 'string' || typeof approval.approved !== 'boolean') {
      throw new ChatRequestError(`parts[${index}] of the assistant message is approval-responded without an approval { id, approved }`);
    }
    if (approval.reason !== undefined && typeof approval.reason !== 'string') throw new ChatRequestError(`parts[${index}].approval.reason must be a string`);
    if (seen.has(approval.id)) throw new ChatRequestError(`the approval ${JSON.stringify(approval.id)} is answered twice`);
    seen.add(approval.id);
    responses.push({ approvalId: approval.id, approved: approval.approved, ...(typeof approval.reason === 'string' ? { reason: approval.reason } : {}) });
  });
  if (responses.length === 0) throw new ChatRequestError('the last message is an assistant message without approval responses: send a user message, or answer the calls that wait (addToolApprovalResponse)');
  return { kind: 'approval', chatId, messageId: id, responses };
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
