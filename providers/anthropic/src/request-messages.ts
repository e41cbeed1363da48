import { ChatProviderError, extractText, type ContentPart, type JsonValue, type Message, type ToolCall } from '@kosong/core';
import { parseToolArguments } from '@kosong/core/provider-kit';

import { redactedThinkingData } from './redacted-thinking.js';

/** A content block of a Messages API request. */
export type RequestBlock = { [key: string]: JsonValue };

/** A message of a Messages API request: `user` or `assistant`, with a list of blocks. */
export interface RequestMessage {
  readonly role: 'user' | 'assistant';
  readonly content: RequestBlock[];
}

/** How kosong messages become Messages API messages. */
export interface MessageConversion {
  /**
   * Content of `tool_result` blocks: `blocks` (text and image blocks) or `text` (the text parts
   * joined with newlines, as one string).
   */
  readonly toolResultContent: 'blocks' | 'text';
}

const IMAGE_MEDIA_TYPES: ReadonlySet<string> = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/**
 * The `messages` of a Messages API request (kosong spec §7.5):
 *
 * - `user` / `assistant` messages keep their role; text parts become `text` blocks and images
 *   `image` blocks (a base64 `data:` URI as a `base64` source, any other URL as a `url` source);
 * - think parts of assistant messages go back as they came: with a signature (`encrypted`) as a
 *   `thinking` block, a redacted one as a `redacted_thinking` block; a think part without a
 *   signature cannot be sent and is dropped, as are think parts of other roles;
 * - the tool calls of an assistant message follow its content as `tool_use` blocks with the
 *   arguments parsed into an object (no arguments: `{}`);
 * - a `tool` message becomes a user message with one `tool_result` block; consecutive ones are
 *   merged into one user message (the API wants parallel results together);
 * - a `system` message becomes a user message `<system>…</system>` (the API has no system role
 *   mid-conversation);
 * - text that is empty or only whitespace is left out (the API rejects such blocks), and so is a
 *   message left with no block at all.
 *
 * @throws {ChatProviderError} naming the message for what the API cannot take: audio or video, a
 * malformed image `data:` URI, a tool message without `toolCallId` or with a think part, tool-call
 * arguments that are not a JSON object.
 */
export function convertMessages(history: readonly Message[], conversion: MessageConversion): RequestMessage[] {
  const messages: RequestMessage[] = [];
  for (let index = 0; index < history.length; index++) {
    const message = convertMessage(history[index]!, index, conversion);
    if (message.content.length === 0) continue;
    const previous = messages.at(-1);
    if (previous !== undefined && isToolResults(previous) && isToolResults(message)) previous.content.push(...message.content);
    else messages.push(message);
  }
  return messages;
}

function convertMessage(message: Message, index: number, conversion: MessageConversion): RequestMessage {
  const where = `message ${index} (${message.role})`;
  switch (message.role) {
    case 'system': {
      const text = extractText(message, '\n');
      return { role: 'user', content: [{ type: 'text', text: `<system>${text}</system>` }] };
    }
    case 'tool':
      return { role: 'user', content: [toolResultBlock(message, where, conversion)] };
    case 'user':
    case 'assistant': {
      const content: RequestBlock[] = [];
      for (const part of message.content) {
        const block = contentBlock(part, message.role, where);
        if (block !== undefined) content.push(block);
      }
      if (message.role === 'assistant') for (const call of message.toolCalls ?? []) content.push(toolUseBlock(call, where));
      return { role: message.role, content };
    }
    default:
      throw new ChatProviderError(`Cannot send ${where}: unknown role ${JSON.stringify(message.role)}`);
  }
}

function contentBlock(part: ContentPart, role: 'user' | 'assistant', where: string): RequestBlock | undefined {
  switch (part.type) {
    case 'text':
      return isBlank(part.text) ? undefined : { type: 'text', text: part.text };
    case 'image_url':
      return imageBlock(part.imageUrl.url, where);
    case 'think': {
      if (role !== 'assistant' || part.encrypted === undefined || part.encrypted === '') return undefined;
      const redacted = redactedThinkingData(part);
      if (redacted !== undefined) return { type: 'redacted_thinking', data: redacted };
      return { type: 'thinking', thinking: part.think, signature: part.encrypted };
    }
    case 'audio_url':
    case 'video_url':
      throw new ChatProviderError(`Cannot send ${where}: the Anthropic Messages API takes no ${part.type === 'audio_url' ? 'audio' : 'video'} input`);
    default:
      throw new ChatProviderError(`Cannot send ${where}: unknown content part type ${JSON.stringify((part as { type?: unknown }).type)}`);
  }
}

function toolResultBlock(message: Message, where: string, conversion: MessageConversion): RequestBlock {
  if (message.toolCallId === undefined || message.toolCallId === '') {
    throw new ChatProviderError(`Cannot send ${where}: a tool message needs the \`toolCallId\` of the call it answers`);
  }
  let content: JsonValue;
  if (conversion.toolResultContent === 'text') {
    content = extractText(message, '\n');
  } else {
    const blocks: RequestBlock[] = [];
    for (const part of message.content) {
      if (part.type === 'text') {
        if (!isBlank(part.text)) blocks.push({ type: 'text', text: part.text });
      } else if (part.type === 'image_url') {
        blocks.push(imageBlock(part.imageUrl.url, where));
      } else {
        throw new ChatProviderError(`Cannot send ${where}: a tool result can hold only text and images, not ${JSON.stringify(part.type)}`);
      }
    }
    // an empty list is sent as no content at all (the field is optional)
    if (blocks.length === 0) return { type: 'tool_result', tool_use_id: message.toolCallId };
    content = blocks;
  }
  return { type: 'tool_result', tool_use_id: message.toolCallId, content };
}

function toolUseBlock(call: ToolCall, where: string): RequestBlock {
  const describe = `tool call ${JSON.stringify(call.id)} (${call.function.name}) of ${where}`;
  const parsed = parseToolArguments(call.function.arguments);
  if (!parsed.ok) throw new ChatProviderError(`Cannot send ${describe}: its arguments are not valid JSON (${parsed.error})`);
  const input = parsed.value;
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new ChatProviderError(`Cannot send ${describe}: its arguments must be a JSON object, got ${jsonKind(input)}`);
  }
  return { type: 'tool_use', id: call.id, name: call.function.name, input };
}

/**
 * An `image` block: a `data:` URI of PNG, JPEG, GIF or WebP as a `base64` source, any other URL as
 * a `url` source.
 */
function imageBlock(url: string, where: string): RequestBlock {
  if (!url.startsWith('data:')) return { type: 'image', source: { type: 'url', url } };
  const separator = url.indexOf(';base64,');
  if (separator === -1) throw new ChatProviderError(`Cannot send the image of ${where}: a data: URI must be base64 (data:<type>;base64,<data>)`);
  const mediaType = url.slice('data:'.length, separator);
  if (!IMAGE_MEDIA_TYPES.has(mediaType)) {
    throw new ChatProviderError(`Cannot send the image of ${where}: unsupported media type ${JSON.stringify(mediaType)} (the API takes ${[...IMAGE_MEDIA_TYPES].join(', ')})`);
  }
  return { type: 'image', source: { type: 'base64', media_type: mediaType, data: url.slice(separator + ';base64,'.length) } };
}

function isToolResults(message: RequestMessage): boolean {
  return message.role === 'user' && message.content.length > 0 && message.content.every((block) => block['type'] === 'tool_result');
}

function isBlank(text: string): boolean {
  return text.trim() === '';
}

function jsonKind(value: JsonValue): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
