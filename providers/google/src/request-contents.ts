import { ChatProviderError, type ContentPart, type JsonObject, type Message, type ToolCall } from '@kosong/core';
import { parseToolArguments } from '@kosong/core/provider-kit';

import type { MediaPart, MediaResolver } from './media-resolver.js';
import { SKIP_THOUGHT_SIGNATURE, THOUGHT_SIGNATURE_KEY } from './thought-signature.js';
import { usesThinkingLevel } from './thinking-config.js';

/** One part of a Gemini request content (the subset kosong sends). */
export type RequestPart =
  | { readonly text: string }
  | MediaPart
  | { readonly functionCall: { readonly name: string; readonly args: JsonObject }; readonly thoughtSignature?: string }
  | { readonly functionResponse: FunctionResponse };

/** A `functionResponse` of a Gemini request. */
export interface FunctionResponse {
  readonly name: string;
  readonly response: { readonly output: string };
  /** Images and audio the tool returned (multimodal function responses). */
  readonly parts?: readonly MediaPart[];
}

/** One content (turn) of a Gemini request. */
export interface RequestContent {
  readonly role: 'user' | 'model';
  readonly parts: readonly RequestPart[];
}

/**
 * Converts a kosong history into Gemini `contents` (kosong spec §7.6):
 *
 * - `user` → role `user`; `assistant` → role `model`; a `system` message mid-conversation → a
 *   `user` content with its text in `<system>…</system>` (Gemini has no such role there);
 * - text parts as `{ text }`; think parts are not sent; images and audio through the
 *   {@link MediaResolver}; video is refused (not supported yet);
 * - an assistant's tool calls → `functionCall` parts (arguments parsed as a JSON object) after its
 *   text, each with its `thoughtSignature` from `extras.thought_signature_b64`. For a gemini-3 model,
 *   a turn whose calls carry no signature at all (a history from another model) gets the documented
 *   `skip_thought_signature_validator` on its first call, which those models otherwise refuse;
 * - the `tool` messages right after a tool-calling turn → ONE `user` content of `functionResponse`
 *   parts in the order of the calls (`response.output` = the text parts joined; images and audio as
 *   its `parts`). Every call needs exactly one result: a missing, unexpected or duplicate id is a
 *   {@link ChatProviderError}. Ids are never sent (Gemini pairs calls and results by position);
 * - a `tool` message that follows no tool call → its own `user` content, named after its `name`,
 *   or its id when kosong made that id up (`<name>_<uuid>`);
 * - a content left without parts (a message of only thinking, say) is not sent.
 *
 * @throws {ChatProviderError} for a history Gemini cannot take (see above), or a media failure.
 */
export async function convertHistory(history: readonly Message[], model: string, media: MediaResolver): Promise<RequestContent[]> {
  prefetchMedia(history, media);
  const contents: RequestContent[] = [];
  const push = (content: RequestContent): void => {
    if (content.parts.length > 0) contents.push(content);
  };
  for (let index = 0; index < history.length; index++) {
    const message = history[index]!;
    switch (message.role) {
      case 'user':
        push({ role: 'user', parts: await contentParts(message.content, media) });
        break;
      case 'system':
        push({ role: 'user', parts: await contentParts(message.content, media, (text) => `<system>${text}</system>`) });
        break;
      case 'assistant': {
        const calls = message.toolCalls ?? [];
        push({ role: 'model', parts: [...(await contentParts(message.content, media)), ...functionCallParts(calls, model)] });
        let end = index + 1;
        while (end < history.length && history[end]!.role === 'tool') end++;
        if (calls.length > 0 && end > index + 1) {
          push({ role: 'user', parts: await packToolResults(calls, history.slice(index + 1, end), media) });
          index = end - 1;
        }
        break;
      }
      case 'tool':
        push({ role: 'user', parts: [await orphanToolResult(message, media)] });
        break;
      default:
        throw new ChatProviderError(`Unknown message role: ${String((message as { role: unknown }).role)}`);
    }
  }
  return contents;
}

function prefetchMedia(history: readonly Message[], media: MediaResolver): void {
  for (const message of history) {
    for (const part of message.content) {
      if (part.type === 'image_url') media.prefetch('image', part.imageUrl.url);
      else if (part.type === 'audio_url') media.prefetch('audio', part.audioUrl.url);
    }
  }
}

async function contentParts(content: readonly ContentPart[], media: MediaResolver, wrap?: (text: string) => string): Promise<RequestPart[]> {
  const parts: RequestPart[] = [];
  for (const part of content) {
    switch (part.type) {
      case 'text':
        parts.push({ text: wrap === undefined ? part.text : wrap(part.text) });
        break;
      case 'think':
        break; // Gemini keeps its thinking behind thought signatures; the text is not sent back
      case 'image_url':
        parts.push(await media.part('image', part.imageUrl.url));
        break;
      case 'audio_url':
        parts.push(await media.part('audio', part.audioUrl.url));
        break;
      case 'video_url':
        throw videoUnsupported();
      default:
        throw new ChatProviderError(`Unknown content part type: ${String((part as { type: unknown }).type)}`);
    }
  }
  return parts;
}

function functionCallParts(calls: readonly ToolCall[], model: string): RequestPart[] {
  const signatures: (string | undefined)[] = calls.map((call) => thoughtSignature(call));
  if (calls.length > 0 && usesThinkingLevel(model) && !signatures.some((signature) => signature !== undefined)) {
    signatures[0] = SKIP_THOUGHT_SIGNATURE;
  }
  return calls.map((call, index) => {
    const functionCall = { name: call.function.name, args: callArguments(call) };
    const signature = signatures[index];
    return signature === undefined ? { functionCall } : { functionCall, thoughtSignature: signature };
  });
}

function thoughtSignature(call: ToolCall): string | undefined {
  const signature = call.extras?.[THOUGHT_SIGNATURE_KEY];
  if (signature === undefined || signature === null || signature === '') return undefined;
  if (typeof signature !== 'string') {
    throw new ChatProviderError(`Tool call ${call.id}: extras.${THOUGHT_SIGNATURE_KEY} must be a base64 string, not ${typeof signature}`);
  }
  return signature;
}

function callArguments(call: ToolCall): JsonObject {
  const parsed = parseToolArguments(call.function.arguments);
  if (!parsed.ok) throw new ChatProviderError(`Tool call arguments must be valid JSON. (call ${call.id} to ${call.function.name}: ${parsed.error})`);
  const value = parsed.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ChatProviderError(`Tool call arguments must be a JSON object. (call ${call.id} to ${call.function.name})`);
  }
  return value as JsonObject;
}

async function packToolResults(calls: readonly ToolCall[], results: readonly Message[], media: MediaResolver): Promise<RequestPart[]> {
  const slots: (Message | undefined)[] = calls.map(() => undefined);
  const unexpected: string[] = [];
  for (const result of results) {
    const id = result.toolCallId;
    if (id === undefined) throw new ChatProviderError('Tool response is missing `tool_call_id`.');
    let slot = -1;
    let known = false;
    for (let index = 0; index < calls.length; index++) {
      if (calls[index]!.id !== id) continue;
      known = true;
      if (slots[index] === undefined) {
        slot = index;
        break;
      }
    }
    if (slot !== -1) slots[slot] = result;
    else if (known) throw new ChatProviderError(`Duplicate tool response for id: ${id}`);
    else unexpected.push(id);
  }
  const missing = calls.filter((_, index) => slots[index] === undefined).map((call) => call.id);
  if (missing.length > 0) throw new ChatProviderError(`Missing tool responses for ids: ${listRepr(missing)}`);
  if (unexpected.length > 0) throw new ChatProviderError(`Unexpected tool responses for ids: ${listRepr(unexpected)}`);
  const parts: RequestPart[] = [];
  for (let index = 0; index < calls.length; index++) parts.push(await functionResponsePart(calls[index]!.function.name, slots[index]!, media));
  return parts;
}

async function orphanToolResult(message: Message, media: MediaResolver): Promise<RequestPart> {
  const id = message.toolCallId;
  if (id === undefined) throw new ChatProviderError('Tool response is missing `tool_call_id`.');
  const name = message.name ?? /^(.+)_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.exec(id)?.[1];
  if (name === undefined) {
    throw new ChatProviderError(
      `Tool response ${id} follows no tool call, and its function name is unknown (give the tool message a \`name\`)`,
    );
  }
  return functionResponsePart(name, message, media);
}

async function functionResponsePart(name: string, message: Message, media: MediaResolver): Promise<RequestPart> {
  let output = '';
  const parts: MediaPart[] = [];
  for (const part of message.content) {
    if (part.type === 'text') output += part.text;
    else if (part.type === 'image_url') parts.push(await media.part('image', part.imageUrl.url));
    else if (part.type === 'audio_url') parts.push(await media.part('audio', part.audioUrl.url));
    else if (part.type === 'video_url') throw videoUnsupported();
  }
  const functionResponse: FunctionResponse = parts.length > 0 ? { name, response: { output }, parts } : { name, response: { output } };
  return { functionResponse };
}

function videoUnsupported(): ChatProviderError {
  return new ChatProviderError('GeminiChatProvider does not support video parts (video_url) yet: send a frame as an image, or leave the video out');
}

/** A list of ids as the original shows it: `['a', 'b']`. */
function listRepr(ids: readonly string[]): string {
  return `[${ids.map((id) => `'${id}'`).join(', ')}]`;
}
