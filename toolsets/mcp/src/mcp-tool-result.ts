/**
 * Conversion of an MCP `tools/call` result into a kosong return value, with the output budget of
 * the original kosong (spec §5.8).
 *
 * @module
 */
import { isDeepStrictEqual } from 'node:util';
import { textPart, toolError, toolOk, type ContentPart, type ToolReturnValue } from '@kosong/core';
import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/sdk/types.js';
import { convertMcpContent, type ConvertMcpContentOptions } from './mcp-content.js';

/** The default output budget, in characters (UTF-16 code units), shared by text and media URLs. */
export const MCP_MAX_OUTPUT_CHARS = 100_000;

/** The message of the error result given for an MCP result with `isError: true`. */
export const MCP_TOOL_ERROR_MESSAGE = 'Tool returned an error. The output may be error message or incomplete output';

/** Options of {@link convertMcpToolResult}. */
export interface ConvertMcpToolResultOptions extends ConvertMcpContentOptions {
  /** The output budget in characters; default {@link MCP_MAX_OUTPUT_CHARS}. */
  readonly maxOutputChars?: number;
}

/** The label of the text part that gives a result's `structuredContent` beside its content. */
export const STRUCTURED_CONTENT_LABEL = 'Structured content: ';

/** The text part appended when output was cut to fit the budget. */
export function truncationNote(maxOutputChars: number): string {
  return `\n\n[Output truncated: exceeded ${maxOutputChars} character limit. Use pagination or more specific queries to get remaining content.]`;
}

/**
 * Converts the content of an MCP tool result into content parts, in order, within a character
 * budget shared by text and media URLs:
 *
 * - each block is converted with {@link convertMcpContent} (every known type has a part or a text
 *   form; an unknown one becomes `[Unsupported content: <type>]`);
 * - a text part longer than what is left of the budget is cut to it; once the budget is spent,
 *   further text is dropped;
 * - a media part whose URL is longer than what is left is dropped (a `data:` URL cannot be cut);
 * - if anything was cut or dropped, a {@link truncationNote} is appended.
 *
 * `structuredContent` is given beside the content, as the text `Structured content: <JSON>` after
 * it, unless a text block already is that JSON (the spec asks servers to send it so); with no
 * content at all it is the JSON text alone. It counts against the budget like any text.
 */
export function convertMcpContentList(
  content: readonly ContentBlock[],
  options: ConvertMcpToolResultOptions = {},
  structuredContent?: unknown,
): ContentPart[] {
  const maxChars = options.maxOutputChars ?? MCP_MAX_OUTPUT_CHARS;
  const converted = content.map((block) => convertMcpContent(block, options));
  if (structuredContent !== undefined && structuredContent !== null) {
    if (converted.length === 0) converted.push(textPart(JSON.stringify(structuredContent)));
    else if (!content.some((block) => block.type === 'text' && isJsonOf(block.text, structuredContent))) {
      converted.push(textPart(STRUCTURED_CONTENT_LABEL + JSON.stringify(structuredContent)));
    }
  }

  const parts: ContentPart[] = [];
  let budget = maxChars;
  let truncated = false;
  for (const part of converted) {
    switch (part.type) {
      case 'text': {
        if (budget <= 0) {
          truncated = true;
        } else if (part.text.length > budget) {
          parts.push(textPart(cut(part.text, budget)));
          truncated = true;
          budget = 0;
        } else {
          parts.push(part);
          budget -= part.text.length;
        }
        break;
      }
      case 'image_url':
      case 'audio_url':
      case 'video_url': {
        const url = mediaURL(part);
        if (url.length > budget) {
          truncated = true;
        } else {
          parts.push(part);
          budget -= url.length;
        }
        break;
      }
      default:
        parts.push(part);
    }
  }
  if (truncated) parts.push(textPart(truncationNote(maxChars)));
  return parts;
}

/**
 * Converts an MCP tool result into a return value: the content as {@link convertMcpContentList}
 * gives it; `isError: true` gives an error result with {@link MCP_TOOL_ERROR_MESSAGE} and that
 * content as output, anything else a successful one.
 */
export function convertMcpToolResult(result: CallToolResult, options: ConvertMcpToolResultOptions = {}): ToolReturnValue {
  const output = convertMcpContentList(result.content ?? [], options, result.structuredContent);
  return result.isError === true ? toolError({ output, message: MCP_TOOL_ERROR_MESSAGE, brief: '' }) : toolOk({ output });
}

/** Whether `text` is JSON whose value is `value`. */
function isJsonOf(text: string, value: unknown): boolean {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return false;
  try {
    return isDeepStrictEqual(JSON.parse(trimmed), value);
  } catch {
    return false;
  }
}

function mediaURL(part: ContentPart): string {
  switch (part.type) {
    case 'image_url':
      return part.imageUrl.url;
    case 'audio_url':
      return part.audioUrl.url;
    case 'video_url':
      return part.videoUrl.url;
    default:
      return '';
  }
}

/** The first `length` code units of `text`, one fewer if that would split a surrogate pair. */
function cut(text: string, length: number): string {
  const last = text.charCodeAt(length - 1);
  return last >= 0xd800 && last <= 0xdbff ? text.slice(0, length - 1) : text.slice(0, length);
}
