/**
 * Conversion of one MCP content block into a kosong content part (spec §5.8).
 *
 * @module
 */
import { audioURLPart, imageURLPart, videoURLPart, type ContentPart } from '@kosong/core';
import { errorMarker, hasErrorMarker, markError } from '@kosong/core/toolset-kit';
import type { ContentBlock } from '@modelcontextprotocol/sdk/types.js';

const UNSUPPORTED_CONTENT = errorMarker('UnsupportedMcpContentError');

/** An MCP content block kosong has no content part for. Its message is what the model is told. */
export class UnsupportedMcpContentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnsupportedMcpContentError';
    markError(this, UNSUPPORTED_CONTENT);
  }

  /** Whether `error` is an {@link UnsupportedMcpContentError} (works across package copies). */
  static isInstance(error: unknown): error is UnsupportedMcpContentError {
    return hasErrorMarker(error, UNSUPPORTED_CONTENT);
  }
}

/** The mime type assumed when a resource does not say. */
const DEFAULT_MIME_TYPE = 'application/octet-stream';

/**
 * Converts one MCP content block, as the original kosong does:
 *
 * | MCP block | part |
 * |---|---|
 * | `text` | text part |
 * | `image` | image part with a `data:{mimeType};base64,…` URL |
 * | `audio` | audio part with a `data:` URL |
 * | `resource` with a `blob` | image, audio or video part (by mime type) with a `data:` URL |
 * | `resource_link` | image, audio or video part (by mime type) with the link's URI |
 *
 * @throws {UnsupportedMcpContentError} for anything else: a blob or link of another mime type
 * (`Unsupported mime type: …`), a text resource or an unknown block (`Unsupported MCP tool result part: …`).
 */
export function convertMcpContent(block: ContentBlock): ContentPart {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text };
    case 'image':
      return imageURLPart(dataURL(block.mimeType, block.data));
    case 'audio':
      return audioURLPart(dataURL(block.mimeType, block.data));
    case 'resource': {
      const resource = block.resource;
      if ('blob' in resource && typeof resource.blob === 'string') {
        return mediaPart(resource.mimeType, dataURL(resource.mimeType ?? DEFAULT_MIME_TYPE, resource.blob));
      }
      break;
    }
    case 'resource_link':
      return mediaPart(block.mimeType, block.uri);
  }
  throw new UnsupportedMcpContentError(`Unsupported MCP tool result part: ${describeBlock(block)}`);
}

/** An image, audio or video part for a resource of this mime type. */
function mediaPart(mimeType: string | undefined, url: string): ContentPart {
  const mime = mimeType ?? DEFAULT_MIME_TYPE;
  if (mime.startsWith('image/')) return imageURLPart(url);
  if (mime.startsWith('audio/')) return audioURLPart(url);
  if (mime.startsWith('video/')) return videoURLPart(url);
  throw new UnsupportedMcpContentError(`Unsupported mime type: ${mime}`);
}

function dataURL(mimeType: string, base64: string): string {
  return `data:${mimeType};base64,${base64}`;
}

/** The block as JSON (the note is counted against the output budget like any text, so its length is bounded there). */
function describeBlock(block: unknown): string {
  try {
    return JSON.stringify(block) ?? String(block);
  } catch {
    return String(block);
  }
}
