/**
 * kosong messages as the prompt of an AI SDK language model (`LanguageModelV2/V3/V4Prompt`).
 *
 * @module
 */
import type { LanguageModelV2Prompt, LanguageModelV3Prompt } from '@ai-sdk/provider';
import type { LanguageModelV4Prompt } from './spec-v4.js';
import { ChatProviderError, type ContentPart, type JsonValue, type Message, type ToolCall } from '@kosong/core';

import type { SpecificationVersion } from './language-model.js';
import { reasoningMetadata, toolCallMetadata, type ProviderMetadata } from './provider-metadata.js';

/** A prompt of any of the three specs. */
export type Prompt = LanguageModelV4Prompt | LanguageModelV3Prompt | LanguageModelV2Prompt;

type PromptPart = Record<string, unknown>;
type PromptMessage = { role: 'system'; content: string } | { role: 'user' | 'assistant' | 'tool'; content: PromptPart[] };

/** A media part of a kosong message: which kind, and its URL or `data:` URI. */
interface Media {
  readonly kind: 'image' | 'audio' | 'video';
  readonly url: string;
}

/**
 * The prompt of one call, in the terms of the model's spec:
 *
 * - the system prompt first, as a `system` message (none when it is empty); a `system` message of
 *   the history stays a `system` message where it is (the provider package decides what it makes
 *   of one mid-conversation);
 * - text parts as `text` parts (empty ones left out); images, audio and video as `file` parts with
 *   their media type (a `data:` URI as base64 data with its own type, a URL as a URL with the type
 *   its extension names, else `image/*`, `audio/*`, `video/*`);
 * - think parts of assistant messages as `reasoning` parts, with the provider metadata they carry
 *   (see `provider-metadata.ts`) as the part's `providerOptions`: a signed or encrypted reasoning
 *   goes back as it came; think parts of other roles are left out;
 * - the tool calls of an assistant message as `tool-call` parts after its content, the arguments
 *   parsed (none: `{}`; not JSON: the text as it is), with their provider metadata;
 * - each `tool` message as a `tool-result` part naming the call's tool (from the assistant message
 *   that made the call), consecutive ones in one `tool` message, in the order of the history (call
 *   order); text only as a `text` output, with media as a `content` output;
 * - a message left with nothing to send is left out.
 *
 * @throws {ChatProviderError} naming the message: a tool message without `toolCallId`, or whose call
 * is not in the history and that has no `name`; a malformed `data:` URI; a media URL in a tool
 * result for a v2 model (whose tool outputs take base64 media only).
 */
export function toPrompt(version: SpecificationVersion, systemPrompt: string, history: readonly Message[]): Prompt {
  const prompt: PromptMessage[] = [];
  if (systemPrompt !== '') prompt.push({ role: 'system', content: systemPrompt });
  const toolNames = new Map<string, string>();
  for (let index = 0; index < history.length; index++) {
    const message = history[index]!;
    const where = `message ${index} (${message.role})`;
    switch (message.role) {
      case 'system': {
        const text = textOf(message.content);
        if (text !== '') prompt.push({ role: 'system', content: text });
        break;
      }
      case 'user':
        pushMessage(prompt, 'user', contentParts(version, message.content, false, where));
        break;
      case 'assistant': {
        const content = contentParts(version, message.content, true, where);
        for (const call of message.toolCalls ?? []) {
          toolNames.set(call.id, call.function.name);
          content.push(toolCallPart(call));
        }
        pushMessage(prompt, 'assistant', content);
        break;
      }
      case 'tool': {
        const result = toolResultPart(version, message, toolNames, where);
        const previous = prompt.at(-1);
        if (previous?.role === 'tool') previous.content.push(result);
        else prompt.push({ role: 'tool', content: [result] });
        break;
      }
      default:
        throw new ChatProviderError(`Cannot send ${where}: unknown role ${JSON.stringify((message as { role?: unknown }).role)}`);
    }
  }
  return prompt as Prompt;
}

function pushMessage(prompt: PromptMessage[], role: 'user' | 'assistant', content: PromptPart[]): void {
  if (content.length > 0) prompt.push({ role, content });
}

function contentParts(version: SpecificationVersion, parts: readonly ContentPart[], assistant: boolean, where: string): PromptPart[] {
  const content: PromptPart[] = [];
  for (const part of parts) {
    switch (part.type) {
      case 'text':
        if (part.text !== '') content.push({ type: 'text', text: part.text });
        break;
      case 'think': {
        if (!assistant) break;
        const metadata = reasoningMetadata(part);
        if (part.think === '' && metadata === undefined) break;
        content.push(withOptions({ type: 'reasoning', text: part.think }, metadata));
        break;
      }
      case 'image_url':
        content.push(filePart(version, { kind: 'image', url: part.imageUrl.url }, where));
        break;
      case 'audio_url':
        content.push(filePart(version, { kind: 'audio', url: part.audioUrl.url }, where));
        break;
      case 'video_url':
        content.push(filePart(version, { kind: 'video', url: part.videoUrl.url }, where));
        break;
      default:
        throw new ChatProviderError(`Cannot send ${where}: unknown content part type ${JSON.stringify((part as { type?: unknown }).type)}`);
    }
  }
  return content;
}

function toolCallPart(call: ToolCall): PromptPart {
  return withOptions({ type: 'tool-call', toolCallId: call.id, toolName: call.function.name, input: callInput(call.function.arguments) }, toolCallMetadata(call.extras));
}

function toolResultPart(version: SpecificationVersion, message: Message, toolNames: ReadonlyMap<string, string>, where: string): PromptPart {
  const id = message.toolCallId;
  if (id === undefined || id === '') throw new ChatProviderError(`Cannot send ${where}: a tool message needs the \`toolCallId\` of the call it answers`);
  const toolName = toolNames.get(id) ?? message.name;
  if (toolName === undefined) {
    throw new ChatProviderError(`Cannot send ${where}: the call ${JSON.stringify(id)} it answers is not in the history, and the message has no \`name\` (the tool's)`);
  }
  return { type: 'tool-result', toolCallId: id, toolName, output: toolOutput(version, message.content, where) };
}

/** A tool result's output: its text as a `text` output, or, with media, a `content` output in the spec's terms. */
function toolOutput(version: SpecificationVersion, parts: readonly ContentPart[], where: string): PromptPart {
  const media = parts.some((part) => part.type === 'image_url' || part.type === 'audio_url' || part.type === 'video_url');
  if (!media) return { type: 'text', value: textOf(parts) };
  const value: PromptPart[] = [];
  for (const part of parts) {
    if (part.type === 'text') {
      if (part.text !== '') value.push({ type: 'text', text: part.text });
    } else if (part.type !== 'think') {
      const item: Media = part.type === 'image_url' ? { kind: 'image', url: part.imageUrl.url } : part.type === 'audio_url' ? { kind: 'audio', url: part.audioUrl.url } : { kind: 'video', url: part.videoUrl.url };
      value.push(toolOutputMedia(version, item, where));
    }
  }
  return { type: 'content', value };
}

function toolOutputMedia(version: SpecificationVersion, media: Media, where: string): PromptPart {
  const data = dataURI(media.url, where);
  if (version === 'v4') return { type: 'file', mediaType: data?.mediaType ?? mediaTypeOf(media), data: data === undefined ? { type: 'url', url: new URL(media.url) } : { type: 'data', data: data.base64 } };
  if (version === 'v3') {
    if (data === undefined) return media.kind === 'image' ? { type: 'image-url', url: media.url } : { type: 'file-url', url: media.url };
    return media.kind === 'image' ? { type: 'image-data', data: data.base64, mediaType: data.mediaType } : { type: 'file-data', data: data.base64, mediaType: data.mediaType };
  }
  if (data === undefined) throw new ChatProviderError(`Cannot send ${where}: a tool result of a v2 model takes media as data: URIs only, not the URL ${media.url}`);
  return { type: 'media', data: data.base64, mediaType: data.mediaType };
}

/** A `file` part: base64 data from a `data:` URI, or the URL. */
function filePart(version: SpecificationVersion, media: Media, where: string): PromptPart {
  const data = dataURI(media.url, where);
  const mediaType = data?.mediaType ?? mediaTypeOf(media);
  if (version === 'v4') return { type: 'file', mediaType, data: data === undefined ? { type: 'url', url: new URL(media.url) } : { type: 'data', data: data.base64 } };
  return { type: 'file', mediaType, data: data === undefined ? new URL(media.url) : data.base64 };
}

/** The media type and base64 data of a `data:` URI; `undefined` for any other URL. */
function dataURI(url: string, where: string): { readonly mediaType: string; readonly base64: string } | undefined {
  if (!url.startsWith('data:')) {
    if (!URL.canParse(url)) throw new ChatProviderError(`Cannot send ${where}: ${JSON.stringify(url.slice(0, 80))} is neither a URL nor a data: URI`);
    return undefined;
  }
  const comma = url.indexOf(',');
  if (comma === -1) throw new ChatProviderError(`Cannot send ${where}: a data: URI needs a comma before its data (data:<type>;base64,<data>)`);
  const header = url.slice('data:'.length, comma);
  const payload = url.slice(comma + 1);
  const base64 = header.endsWith(';base64');
  const mediaType = (base64 ? header.slice(0, -';base64'.length) : header).split(';', 1)[0] || 'text/plain';
  return { mediaType, base64: base64 ? payload : Buffer.from(decodeURIComponent(payload), 'utf8').toString('base64') };
}

const EXTENSION_TYPES: Readonly<Record<string, string>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  ogg: 'audio/ogg',
  flac: 'audio/flac',
  mp4: 'video/mp4',
  webm: 'video/webm',
  mov: 'video/quicktime',
};

/** The media type a URL's extension names, when it is of the part's kind; else `<kind>/*`. */
function mediaTypeOf(media: Media): string {
  const extension = /\.([a-z0-9]+)$/i.exec(new URL(media.url).pathname)?.[1]?.toLowerCase();
  const known = extension === undefined ? undefined : EXTENSION_TYPES[extension];
  return known?.startsWith(`${media.kind}/`) ? known : `${media.kind}/*`;
}

/** A call's arguments as the prompt's `input`: the JSON value (none: `{}`), or the text as it is when it is no JSON. */
function callInput(args: string | null): JsonValue {
  if (args === null || args === '') return {};
  try {
    return JSON.parse(args) as JsonValue;
  } catch {
    return args;
  }
}

function withOptions(part: PromptPart, metadata: ProviderMetadata | undefined): PromptPart {
  return metadata === undefined ? part : { ...part, providerOptions: metadata };
}

function textOf(parts: readonly ContentPart[]): string {
  let text = '';
  for (const part of parts) if (part.type === 'text') text += part.text;
  return text;
}
