/**
 * The CLI's MCP servers, connected: their tools offered to the model beside the built-in ones.
 *
 * @module
 */
import { pathToFileURL } from 'node:url';
import type { Tool } from '@kosong/core';
import type { McpServers, McpTenantToolset } from '@kosong/toolset-mcp';
import type { CliMcpConfig } from './mcp-config.js';
import { terminalElicitation, type TerminalElicitationOptions } from './terminal-elicitation.js';

import { MCP_TOOL_SEPARATOR } from './mcp-tool-separator.js';

export { MCP_TOOL_SEPARATOR };

/** One server's tools as the model sees them, for listings. */
export interface CliMcpServerTools {
  readonly server: string;
  readonly tools: readonly Tool[];
}

/**
 * Connects every server of the config (at once), each tool named `<server>__<tool>`, the working
 * directory offered as the servers' root. The servers' stderr is not shown (servers log there).
 * With `questions`, a server's elicitation is put to the user (see {@link terminalElicitation});
 * without, it is declined. `undefined` when the config has no servers.
 *
 * @throws the first server's failure (an `McpConnectionError` naming it); nothing stays open then.
 */
export async function connectMcpServers(config: CliMcpConfig, cwd: string, questions?: TerminalElicitationOptions): Promise<McpTenantToolset | undefined> {
  if (config.servers.length === 0) return undefined;
  const roots = [{ uri: pathToFileURL(cwd).href, name: 'workspace' }];
  const elicitation = questions === undefined ? undefined : terminalElicitation(questions);
  const servers: McpServers = Object.fromEntries(
    config.servers.map(({ name, server }) => [
      name,
      { server: server.type === 'stdio' ? { ...server, stderr: 'ignore' as const } : server, prefix: `${name}${MCP_TOOL_SEPARATOR}`, roots, ...(elicitation === undefined ? {} : { elicitation }) },
    ]),
  );
  // The MCP SDK loads only for a session with servers: a run without any never loads it.
  const { McpTenantToolset } = await import('@kosong/toolset-mcp');
  return McpTenantToolset.connect({ tenant: 'kosong', servers });
}

/** Each server's tools, as offered now. */
export function mcpServerTools(mcp: McpTenantToolset | undefined): CliMcpServerTools[] {
  return (mcp?.servers ?? []).map((server) => ({ server, tools: mcp!.server(server).tools }));
}

/** What `/tools` prints: the built-in tools, then each server's. */
export function describeTools(builtin: readonly Tool[], mcp: McpTenantToolset | undefined): string {
  const lines = [`built-in: ${builtin.map((t) => t.name).join(', ')}`];
  for (const { server, tools } of mcpServerTools(mcp)) {
    lines.push(`mcp server ${server} (${tools.length} ${tools.length === 1 ? 'tool' : 'tools'})${tools.length === 0 ? '' : ':'}`);
    for (const tool of tools) lines.push(`  ${tool.name}`);
  }
  return lines.join('\n');
}
