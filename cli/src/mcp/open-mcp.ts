/**
 * The MCP servers of a local session: read from the config, connected, listed by `/tools`.
 *
 * @module
 */
import type { McpTenantToolset } from '@kosong/toolset-mcp';
import type { TerminalElicitationOptions } from './terminal-elicitation.js';
import { builtinToolset } from '../tools/builtin-tools.js';
import { fail } from '../setup-failure.js';
import { McpConfigError, mcpConfigFile, readMcpConfig } from './mcp-config.js';
import { describeTools } from './mcp-servers.js';

/** A session's MCP servers (none: `toolset` undefined) and what `/tools` says. */
export interface OpenedMcpServers {
  readonly toolset: McpTenantToolset | undefined;
  readonly describeTools: () => string;
}

/**
 * Reads the config (`--mcp-config FILE`, else `kosong.json` in `cwd`, else the user's config) and
 * connects its servers. A config that cannot be used, or a server that cannot be reached, ends the
 * process as a setup error (exit 2) naming the file or the server, before anything runs. A server's
 * elicitations are asked with `questions` (see `terminalElicitation`).
 */
export async function openMcpServers(flag: string | undefined, cwd: string, questions?: TerminalElicitationOptions): Promise<OpenedMcpServers> {
  let toolset: McpTenantToolset | undefined;
  try {
    const config = readMcpConfig(mcpConfigFile(flag, cwd));
    if (config.servers.length > 0) toolset = await (await import('./mcp-servers.js')).connectMcpServers(config, cwd, questions);
  } catch (error) {
    fail(error instanceof McpConfigError || error instanceof Error ? error.message : String(error));
  }
  const builtin = builtinToolset({ cwd, offerBash: true }).tools;
  return { toolset, describeTools: () => describeTools(builtin, toolset) };
}

