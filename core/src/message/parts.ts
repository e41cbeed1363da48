/**
 * The message model: plain readonly data, discriminated on `type`.
 *
 * Parts are values. Nothing in kosong mutates a part after it was created: merging two parts
 * (see {@link mergePart}) builds a new part. That is what lets every observer keep the part it was
 * handed without a defensive copy.
 *
 * @module
 */

/** Any JSON value. */
export type JsonValue = null | boolean | number | string | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/** A JSON object. */
export type JsonObject = { readonly [key: string]: JsonValue };

/** Plain text. Adjacent text parts merge. */
export interface TextPart {
  readonly type: 'text';
  readonly text: string;
}

/**
 * Reasoning content. Adjacent think parts merge until one carries a signature (`encrypted`),
 * which closes the part: the next think part starts a new one.
 */
export interface ThinkPart {
  readonly type: 'think';
  readonly think: string;
  /** Encrypted thinking content or its signature, as the provider sent it. */
  readonly encrypted?: string;
}

/** A media reference: an `https:` URL or a `data:` URI, with an optional id the model can cite. */
export interface MediaURL {
  readonly url: string;
  readonly id?: string;
}

/** An image, by URL or `data:` URI. Never merges. */
export interface ImageURLPart {
  readonly type: 'image_url';
  readonly imageUrl: MediaURL;
}

/** An audio clip, by URL or `data:` URI. Never merges. */
export interface AudioURLPart {
  readonly type: 'audio_url';
  readonly audioUrl: MediaURL;
}

/** A video, by URL or `data:` URI. Never merges. */
export interface VideoURLPart {
  readonly type: 'video_url';
  readonly videoUrl: MediaURL;
}

/** What a message's `content` is made of. */
export type ContentPart = TextPart | ThinkPart | ImageURLPart | AudioURLPart | VideoURLPart;

/** The `type` tags of {@link ContentPart}. */
export type ContentPartType = ContentPart['type'];

/**
 * A request from the model to call a tool. While streaming, `arguments` grows as
 * {@link ToolCallPart}s merge into it; it is a JSON string once complete, or `null` if the model sent none.
 */
export interface ToolCall {
  readonly type: 'function';
  readonly id: string;
  readonly function: {
    readonly name: string;
    readonly arguments: string | null;
  };
  /** Provider-specific data that must travel with the call (e.g. a thought signature). */
  readonly extras?: JsonObject;
}

/** A streamed fragment of the arguments of the preceding {@link ToolCall}. */
export interface ToolCallPart {
  readonly type: 'tool_call_part';
  readonly argumentsPart: string | null;
}

/** One item of a provider's stream. */
export type StreamedMessagePart = ContentPart | ToolCall | ToolCallPart;

/** Builds a {@link TextPart}. */
export function textPart(text: string): TextPart {
  return { type: 'text', text };
}

/** Builds a {@link ThinkPart}. */
export function thinkPart(think: string, encrypted?: string): ThinkPart {
  return encrypted === undefined ? { type: 'think', think } : { type: 'think', think, encrypted };
}

/** Builds an {@link ImageURLPart}. */
export function imageURLPart(url: string, id?: string): ImageURLPart {
  return { type: 'image_url', imageUrl: id === undefined ? { url } : { url, id } };
}

/** Builds an {@link AudioURLPart}. */
export function audioURLPart(url: string, id?: string): AudioURLPart {
  return { type: 'audio_url', audioUrl: id === undefined ? { url } : { url, id } };
}

/** Builds a {@link VideoURLPart}. */
export function videoURLPart(url: string, id?: string): VideoURLPart {
  return { type: 'video_url', videoUrl: id === undefined ? { url } : { url, id } };
}

/** Builds a {@link ToolCall}. */
export function toolCall(id: string, name: string, args: string | null, extras?: JsonObject): ToolCall {
  const call: ToolCall = { type: 'function', id, function: { name, arguments: args } };
  return extras === undefined ? call : { ...call, extras };
}

/** Builds a {@link ToolCallPart}. */
export function toolCallPart(argumentsPart: string | null): ToolCallPart {
  return { type: 'tool_call_part', argumentsPart };
}

/** Whether a streamed part is message content (as opposed to a tool call or a fragment of one). */
export function isContentPart(part: StreamedMessagePart): part is ContentPart {
  return CONTENT_PART_TYPES.has(part.type);
}

const CONTENT_PART_TYPES: ReadonlySet<string> = new Set<ContentPartType>(['text', 'think', 'image_url', 'audio_url', 'video_url']);
