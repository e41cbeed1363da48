/**
 * MCP resources and prompts in a chat: `@server:uri` in a message adds that resource to it (its
 * contents as parts of the user message), and `/prompt [server:]name [key=value …]` sends a prompt's
 * messages as the turn's input.
 *
 * @module
 */
import { textPart, type ContentPart, type Message } from '@kosong/core';
import type { McpTenantToolset } from '@kosong/toolset-mcp';

/** A reference in a message: `@server:uri` (the server one of the session's, the URI up to the next space). */
const REFERENCE = /(?<![\w@])@([A-Za-z0-9_-]+):(\S+)/g;

/** What an input becomes: the messages of its turn, or why it cannot be sent. */
export type McpInput = { readonly messages: readonly Message[] } | { readonly error: string };

/**
 * The user message of `text` with the resources it references read and added after its text, or
 * `undefined` when it references none (an `@word:` whose word is no server of the session is text).
 * A resource that cannot be read makes the whole input an error (nothing is sent).
 */
export async function withResources(text: string, mcp: McpTenantToolset | undefined, signal?: AbortSignal): Promise<McpInput | undefined> {
  if (mcp === undefined) return undefined;
  const servers = new Set(mcp.servers);
  const references = [...text.matchAll(REFERENCE)].filter((match) => servers.has(match[1]!));
  if (references.length === 0) return undefined;
  const { mcpResourceParts } = await import('@kosong/toolset-mcp'); // loaded only when a message references a resource
  const parts: ContentPart[] = [textPart(text)];
  for (const [, server, uri] of references) {
    try {
      parts.push(...mcpResourceParts(await mcp.server(server!).readResource(uri!, signal === undefined ? {} : { signal })));
    } catch (error) {
      return { error: `@${server}:${uri}: the resource cannot be read (${(error as Error).message}); nothing was sent` };
    }
  }
  return { messages: [{ role: 'user', content: parts }] };
}

/** Whether an input is a `/prompt` command. */
export function isPromptCommand(text: string): boolean {
  return /^\/prompt(\s|$)/.test(text);
}

/**
 * The messages of `/prompt [server:]name [key=value …]` (values may be quoted: `city="New York"`).
 * A name without a server is looked up on every server (it must be on exactly one).
 */
export async function promptInput(text: string, mcp: McpTenantToolset | undefined, signal?: AbortSignal): Promise<McpInput> {
  const words = splitWords(text.replace(/^\/prompt\s*/, ''));
  if (words === undefined) return { error: '/prompt: a quote is not closed' };
  const [target, ...rest] = words;
  if (target === undefined) return { error: 'usage: /prompt [server:]name [key=value …] (the prompts of the MCP servers of the session)' };
  if (mcp === undefined || mcp.servers.length === 0) return { error: '/prompt: this session has no MCP servers (kosong.json, --mcp-config)' };
  const args: Record<string, string> = {};
  for (const word of rest) {
    const eq = word.indexOf('=');
    if (eq <= 0) return { error: `/prompt: "${word}" is not key=value` };
    args[word.slice(0, eq)] = word.slice(eq + 1);
  }
  let server: string;
  let name: string;
  const colon = target.indexOf(':');
  if (colon > 0 && mcp.servers.includes(target.slice(0, colon))) {
    server = target.slice(0, colon);
    name = target.slice(colon + 1);
  } else {
    name = target;
    const offering: string[] = [];
    for (const candidate of mcp.servers) {
      try {
        const prompts = await mcp.server(candidate).listPrompts(signal === undefined ? {} : { signal });
        if (prompts.some((prompt) => prompt.name === name)) offering.push(candidate);
      } catch {
        // a server without prompts
      }
    }
    if (offering.length === 0) return { error: `/prompt: no MCP server of the session has a prompt "${name}"` };
    if (offering.length > 1) return { error: `/prompt: "${name}" is a prompt of ${offering.join(' and ')}: name one (/prompt ${offering[0]}:${name})` };
    server = offering[0]!;
  }
  try {
    const { mcpPromptMessages } = await import('@kosong/toolset-mcp');
    const messages = mcpPromptMessages(await mcp.server(server).getPrompt(name, args, signal === undefined ? {} : { signal }));
    if (messages.length === 0) return { error: `/prompt ${server}:${name}: the prompt has no messages` };
    return { messages };
  } catch (error) {
    return { error: `/prompt ${server}:${name}: ${(error as Error).message}` };
  }
}

/** Words split at spaces, double or single quotes keeping spaces in (`undefined`: a quote not closed). */
function splitWords(text: string): string[] | undefined {
  const words: string[] = [];
  let word = '';
  let quote: string | undefined;
  let started = false;
  for (const char of text) {
    if (quote !== undefined) {
      if (char === quote) quote = undefined;
      else word += char;
    } else if (char === '"' || char === "'") {
      quote = char;
      started = true;
    } else if (/\s/.test(char)) {
      if (started) words.push(word);
      word = '';
      started = false;
    } else {
      word += char;
      started = true;
    }
  }
  if (quote !== undefined) return undefined;
  if (started) words.push(word);
  return words;
}
