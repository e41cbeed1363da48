/**
 * `@kosong/toolset-mcp`: the tools of MCP (Model Context Protocol) servers as a kosong toolset.
 *
 * - {@link McpToolset}: one server (stdio or streamable HTTP) as a `Toolset`;
 * - {@link mcpPlugin}: the same as a kernel plugin (connect in setup, close on dispose);
 * - {@link convertMcpToolResult} / {@link convertMcpContent}: MCP results to kosong content (spec §5.8).
 *
 * @packageDocumentation
 */
export type { McpHttpServerConfig, McpServerConfig, McpStdioServerConfig } from './mcp-server-config.js';
export {
  DEFAULT_MCP_TIMEOUT_MS,
  describeMcpTool,
  McpToolset,
  type McpToolFilter,
  type McpToolInfo,
  type McpToolsetOptions,
} from './mcp-toolset.js';
export { McpConnectionError } from './mcp-connection-error.js';
export { replayFromAnnotations, type McpReplayOption } from './mcp-replay.js';
export { mcpPlugin, type McpPlugin, type McpPluginOptions } from './mcp-plugin.js';
export { convertMcpContent, UnsupportedMcpContentError } from './mcp-content.js';
export {
  convertMcpContentList,
  convertMcpToolResult,
  MCP_MAX_OUTPUT_CHARS,
  MCP_TOOL_ERROR_MESSAGE,
  truncationNote,
  type ConvertMcpToolResultOptions,
} from './mcp-tool-result.js';
