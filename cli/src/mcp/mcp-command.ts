/**
 * `kosong mcp list`: the MCP servers of the config, each connected to list its tools.
 *
 * @module
 */
import type { Command } from 'commander';
import type { McpServerConfig } from '@kosong/toolset-mcp';
import type { GlobalOptions } from '../cli-options.js';
import { fail } from '../setup-failure.js';
import { MCP_TOOL_SEPARATOR } from './mcp-tool-separator.js';

/** Registers `kosong mcp` and its `list` command. */
export function registerMcpCommand(program: Command, globalOptions: () => GlobalOptions): void {
  const mcp = program.command('mcp').description('the MCP servers the model is given (from kosong.json, ~/.config/kosong/config.json or --mcp-config)');
  mcp
    .command('list')
    .description('list the configured MCP servers and their tools (each server is started or connected to)')
    .action(async () => {
      const { mcpConfigFile, readMcpConfig, McpConfigError } = await import('./mcp-config.js');
      let config;
      try {
        config = readMcpConfig(mcpConfigFile(globalOptions().mcpConfig, process.cwd()));
      } catch (error) {
        fail(error instanceof McpConfigError ? error.message : String(error));
      }
      if (config.file === undefined) {
        process.stdout.write('no MCP servers: none configured (kosong.json in this directory, ~/.config/kosong/config.json, or --mcp-config FILE)\n');
        return;
      }
      process.stdout.write(`${config.file}: ${config.servers.length} ${config.servers.length === 1 ? 'server' : 'servers'}\n`);
      const { McpToolset } = await import('@kosong/toolset-mcp');
      // Each server on its own: one that cannot be reached is said, the others are still listed.
      const listings = await Promise.all(
        config.servers.map(async ({ name, server }) => {
          const toolset = new McpToolset({ name, server: server.type === 'stdio' ? { ...server, stderr: 'ignore' } : server, prefix: `${name}${MCP_TOOL_SEPARATOR}` });
          try {
            await toolset.connect();
            const tools = toolset.tools.map((tool) => `  ${tool.name}`);
            return { ok: true, text: [`${name} (${describeServer(server)}): ${tools.length} ${tools.length === 1 ? 'tool' : 'tools'}`, ...tools].join('\n') };
          } catch (error) {
            return { ok: false, text: `${name} (${describeServer(server)}): ${(error as Error).message}` };
          } finally {
            await toolset.close();
          }
        }),
      );
      for (const listing of listings) process.stdout.write(`${listing.text}\n`);
      if (listings.some((listing) => !listing.ok)) process.exitCode = 1;
    });
}

/** How a listing names a server's transport: `stdio: node server.js`, `http: https://…`. */
function describeServer(server: McpServerConfig): string {
  if (server.type === 'stdio') return `stdio: ${[server.command, ...(server.args ?? [])].join(' ')}`;
  return `${server.type}: ${String(server.url)}`;
}
