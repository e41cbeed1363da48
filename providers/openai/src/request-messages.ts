import { ChatProviderError, type ContentPart, type JsonValue, type Message } from '@kosong/core';
import type { MediaURL } from '@kosong/core/provider-kit';

/** How kosong messages become Chat Completions messages. */
export interface MessageConversion {
  /** The role of the system prompt and of `system` messages in the history. */
  readonly systemRole: 'system' | 'developer';
  /**
   * The assistant-message field that carries its think parts (their text concatenated, e.g.
   * `reasoning_content`); `undefined` drops think parts.
   */
  readonly reasoningKey: string | undefined;
  /**
   * Content of `tool` messages: `parts` sends a string when the content is exactly one text part and
   * a list of parts otherwise; `text` sends the text parts joined with newlines (media dropped).
   */
  readonly toolMessageContent: 'parts' | 'text';
  /**
   * Audio and video parts: `openai` sends audio given as a base64 `data:` URI of WAV or MP3 as an
   * `input_audio` part and rejects anything else; `passthrough` sends `audio_url` / `video_url`
   * parts as they are (vLLM and Moonshot accept them).
   */
  readonly media: 'openai' | 'passthrough';
}

/** One message of a Chat Completions request body. */
export type RequestMessage = { [key: string]: JsonValue };

/**
 * The `messages` of a Chat Completions request (kosong spec §7.2, §7.3): the system prompt first
 * (when not empty), then each message of the history.
 *
 * - content is a string when it is exactly one text part, else a list of parts; images are
 *   `{type: 'image_url', image_url: {url, id}}` (`id: null` when unset, as the Python original sends);
 * - think parts of assistant messages go to `conversion.reasoningKey` (concatenated, even when
 *   empty), or are dropped; think parts of other messages are dropped;
 * - an assistant message with tool calls and no real content (no part, or only blank text) has no
 *   `content` key, and an empty list of tool calls is left out (the OpenAI API rejects empty arrays);
 * - tool calls are `{type: 'function', id, function: {name, arguments}}`, with `"{}"` for a call that
 *   had no arguments; `extras` (data of other providers) are not sent;
 * - `name` and `tool_call_id` are passed through; `partial` is not sent.
 *
 * @throws {ChatProviderError} for a media part the conversion cannot send, naming the message and part.
 */
export function convertMessages(systemPrompt: string, history: readonly Message[], conversion: MessageConversion): RequestMessage[] {
  const messages: RequestMessage[] = [];
  if (systemPrompt !== '') messages.push({ role: conversion.systemRole, content: systemPrompt });
  for (let i = 0; i < history.length; i++) messages.push(convertMessage(history[i]!, i, conversion));
  return messages;
}

function convertMessage(message: Message, index: number, conversion: MessageConversion): RequestMessage {
  const role = message.role === 'system' ? conversion.systemRole : message.role;
  const out: RequestMessage = { role };
  if (message.name !== undefined) out['name'] = message.name;

  const parts: ContentPart[] = [];
  const thoughts: string[] = [];
  for (const part of message.content) {
    if (part.type === 'think') thoughts.push(part.think);
    else parts.push(part);
  }

  const toolCalls = message.toolCalls ?? [];
  const hasToolCalls = message.role === 'assistant' && toolCalls.length > 0;
  if (!(hasToolCalls && parts.every((part) => part.type === 'text' && part.text.trim() === ''))) {
    out['content'] =
      message.role === 'tool' && conversion.toolMessageContent === 'text'
        ? parts.map((part) => (part.type === 'text' ? part.text : undefined)).filter((text) => text !== undefined).join('\n')
        : convertContent(parts, index, conversion);
  }
  if (toolCalls.length > 0) {
    out['tool_calls'] = toolCalls.map((call) => ({
      type: 'function',
      id: call.id,
      function: { name: call.function.name, arguments: call.function.arguments ?? '{}' },
    }));
  }
  if (message.toolCallId !== undefined) out['tool_call_id'] = message.toolCallId;
  if (message.role === 'assistant' && conversion.reasoningKey !== undefined && thoughts.length > 0) {
    out[conversion.reasoningKey] = thoughts.join('');
  }
  return out;
}

function convertContent(parts: readonly ContentPart[], index: number, conversion: MessageConversion): JsonValue {
  const only = parts.length === 1 ? parts[0] : undefined;
  if (only?.type === 'text') return only.text;
  return parts.map((part, partIndex) => convertPart(part, () => `message ${index}, part ${partIndex}`, conversion));
}

function convertPart(part: ContentPart, where: () => string, conversion: MessageConversion): JsonValue {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: part.text };
    case 'image_url':
      return { type: 'image_url', image_url: media(part.imageUrl) };
    case 'audio_url': {
      if (conversion.media === 'passthrough') return { type: 'audio_url', audio_url: media(part.audioUrl) };
      const audio = inputAudio(part.audioUrl.url);
      if (audio) return { type: 'input_audio', input_audio: audio };
      throw new ChatProviderError(
        `Cannot send the audio of ${where()}: the Chat Completions API takes audio only as a base64 data: URI of WAV or MP3 ` +
          `(got ${describeURL(part.audioUrl.url)}); set \`unsupportedMedia: 'passthrough'\` for endpoints that accept audio_url parts`,
      );
    }
    case 'video_url':
      if (conversion.media === 'passthrough') return { type: 'video_url', video_url: media(part.videoUrl) };
      throw new ChatProviderError(
        `Cannot send the video of ${where()}: the Chat Completions API has no video input; ` +
          "set `unsupportedMedia: 'passthrough'` for endpoints that accept video_url parts (vLLM, Moonshot)",
      );
    default:
      throw new ChatProviderError(`Cannot send ${where()}: unknown content part type ${JSON.stringify((part as { type?: unknown }).type)}`);
  }
}

function media(url: MediaURL): JsonValue {
  return { url: url.url, id: url.id ?? null };
}

const AUDIO_DATA_URI = /^data:audio\/(wav|x-wav|wave|vnd\.wave|mpeg|mp3|mpeg3|x-mpeg-3);base64,/i;

function inputAudio(url: string): { data: string; format: 'wav' | 'mp3' } | undefined {
  const match = AUDIO_DATA_URI.exec(url);
  if (!match) return undefined;
  const subtype = match[1]!.toLowerCase();
  return { data: url.slice(match[0].length), format: subtype.includes('wav') ? 'wav' : 'mp3' };
}

function describeURL(url: string): string {
  if (url.startsWith('data:')) return `a ${url.slice(0, url.search(/[;,]/) + 1 || 30)}… URI`;
  return url.length > 80 ? `${url.slice(0, 80)}…` : url;
}
