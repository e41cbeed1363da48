/**
 * Conversion of MCP content (tool results, prompt messages, read resources) into kosong content parts.
 *
 * @module
 */
import { audioURLPart, imageURLPart, textPart, type ContentPart } from '@kosong/core';
import type { ContentBlock, ResourceLink } from '@modelcontextprotocol/sdk/types.js';

/** The default limit of an embedded binary resource shown as an image part, in decoded bytes (1 MiB). */
export const MCP_MAX_BLOB_BYTES = 1024 * 1024;

/** Options of {@link convertMcpContent} and {@link convertMcpResourceContents}. */
export interface ConvertMcpContentOptions {
  /**
   * The largest embedded binary resource (decoded bytes) given as an image part; a larger one, or
   * one that is not an image, becomes a short text naming its URI, mime type and size. Default
   * {@link MCP_MAX_BLOB_BYTES}.
   */
  readonly maxBlobBytes?: number;
}

/** The contents of one resource, as `resources/read` or an embedded resource gives it. */
export interface McpResourceContents {
  readonly uri: string;
  readonly mimeType?: string | undefined;
  readonly text?: string;
  readonly blob?: string;
}

/**
 * Converts one MCP content block into a kosong content part:
 *
 * | MCP block | part |
 * |---|---|
 * | `text` | text part |
 * | `image` | image part with a `data:{mimeType};base64,…` URL |
 * | `audio` | audio part with a `data:` URL |
 * | `resource_link` | text `[Resource link: <name> <uri> (<mimeType>) — <description>]` (a link is not content: the model may read it with another tool) |
 * | `resource` (embedded) | as {@link convertMcpResourceContents}: text inline, an image blob as an image part, any other blob as a short text |
 * | anything else | text `[Unsupported content: <type>]` |
 *
 * Annotations (`audience`, `priority`) are not shown. Never throws.
 */
export function convertMcpContent(block: ContentBlock, options: ConvertMcpContentOptions = {}): ContentPart {
  switch (block.type) {
    case 'text':
      return textPart(block.text);
    case 'image':
      return imageURLPart(dataURL(block.mimeType, block.data));
    case 'audio':
      return audioURLPart(dataURL(block.mimeType, block.data));
    case 'resource_link':
      return textPart(describeResourceLink(block));
    case 'resource':
      return convertMcpResourceContents(block.resource, options);
    default:
      return textPart(`[Unsupported content: ${typeName(block)}]`);
  }
}

/**
 * Converts the contents of one resource (embedded in a result, or read with `resources/read`):
 *
 * - text: a text part `[Resource <uri> (<mimeType>)]` then a new line and the text;
 * - a blob of an `image/*` type within `maxBlobBytes`: an image part with a `data:` URL;
 * - a blob of a textual type (`text/*`, JSON, XML) within `maxBlobBytes` that is valid UTF-8: its
 *   text, as for a text resource;
 * - any other blob: the text `[Resource <uri> (<mimeType>, <n> bytes): binary content not shown]`
 *   (or `…: larger than the <max>-byte limit]`).
 */
export function convertMcpResourceContents(resource: McpResourceContents, options: ConvertMcpContentOptions = {}): ContentPart {
  const mime = resource.mimeType;
  if (typeof resource.text === 'string') {
    return textPart(`[Resource ${resource.uri}${mime ? ` (${mime})` : ''}]\n${resource.text}`);
  }
  const blob = typeof resource.blob === 'string' ? resource.blob : '';
  const bytes = base64Bytes(blob);
  const maxBytes = options.maxBlobBytes ?? MCP_MAX_BLOB_BYTES;
  const fits = bytes <= maxBytes;
  if (mime?.startsWith('image/') && fits) return imageURLPart(dataURL(mime, blob));
  if (mime !== undefined && isTextual(mime) && fits) {
    const text = decodeUtf8(blob);
    if (text !== undefined) return textPart(`[Resource ${resource.uri} (${mime})]\n${text}`);
  }
  const why = fits ? 'binary content not shown' : `larger than the ${maxBytes}-byte limit`;
  return textPart(`[Resource ${resource.uri} (${mime ?? 'no mime type'}, ${bytes} bytes): ${why}]`);
}

/** The text form of a resource link: its name, URI, mime type and description. */
export function describeResourceLink(link: ResourceLink): string {
  const mime = link.mimeType ? ` (${link.mimeType})` : '';
  const description = link.description ? ` — ${link.description}` : '';
  return `[Resource link: ${link.name} <${link.uri}>${mime}${description}]`;
}

/** The decoded size of base64 text, in bytes. */
export function base64Bytes(base64: string): number {
  let length = base64.length;
  while (length > 0 && (base64[length - 1] === '=' || base64[length - 1] === '\n')) length--;
  return Math.floor((length * 3) / 4);
}

/** Whether a mime type names text: `text/*`, JSON or XML (`application/json`, `…+json`, `…+xml`). */
function isTextual(mime: string): boolean {
  const type = mime.split(';', 1)[0]!.trim().toLowerCase();
  return type.startsWith('text/') || type === 'application/json' || type === 'application/xml' || type.endsWith('+json') || type.endsWith('+xml');
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The UTF-8 text of base64 bytes, or `undefined` if they are not valid UTF-8. */
function decodeUtf8(base64: string): string | undefined {
  try {
    return utf8.decode(Buffer.from(base64, 'base64'));
  } catch {
    return undefined;
  }
}

function dataURL(mimeType: string, base64: string): string {
  return `data:${mimeType};base64,${base64}`;
}

/** The `type` of a block kosong does not know, or what it is when it has none (never its contents). */
function typeName(block: unknown): string {
  const type = typeof block === 'object' && block !== null ? (block as { type?: unknown }).type : undefined;
  return typeof type === 'string' ? type.slice(0, 100) : `a block without a type (${block === null ? 'null' : typeof block})`;
}
