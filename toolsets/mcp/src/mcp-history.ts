/**
 * Resources and prompts as kosong content: what an app adds to the history for `@server:uri` or
 * `/prompt name`.
 *
 * @module
 */
import { createMessage, type ContentPart, type Message } from '@kosong/core';
import type { GetPromptResult, ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { convertMcpContent, convertMcpResourceContents, type ConvertMcpContentOptions } from './mcp-content.js';

/**
 * The content parts of a read resource (`McpToolset.readResource`): each of its contents as
 * {@link convertMcpResourceContents} gives it (text inline with its URI, an image as an image part,
 * other binary content as a short text). Put them in a user message:
 *
 * @example
 * const parts = mcpResourceParts(await docs.readResource('demo://resource/static/document/features.md'));
 * history.push(createMessage('user', [textPart('Summarise this:'), ...parts]));
 */
export function mcpResourceParts(result: ReadResourceResult, options: ConvertMcpContentOptions = {}): ContentPart[] {
  return result.contents.map((contents) => convertMcpResourceContents(contents, options));
}

/**
 * The messages of a prompt (`McpToolset.getPrompt`), in order, with their roles (`user` or
 * `assistant`); each block converted as in tool results (text, image, audio, resource links as text,
 * embedded resources by {@link convertMcpResourceContents}).
 *
 * @example
 * history.push(...mcpPromptMessages(await everything.getPrompt('args-prompt', { city: 'Paris' })));
 */
export function mcpPromptMessages(result: GetPromptResult, options: ConvertMcpContentOptions = {}): Message[] {
  return result.messages.map((message) => createMessage(message.role, [convertMcpContent(message.content, options)]));
}
