/**
 * `@kosong/toolset-mcp`: the tools of MCP (Model Context Protocol) servers as a kosong toolset.
 *
 * - {@link McpToolset}: one server (stdio, streamable HTTP, legacy SSE) as a `Toolset`, with the client's
 *   capabilities (roots, sampling, elicitation), notifications (progress, logs, resource updates),
 *   and the resources and prompts API;
 * - {@link mcpPlugin}: the same as a kernel plugin (connect in setup, close on dispose);
 * - {@link McpTenantToolset} / {@link defineMcpTenant}: a tenant's own servers and credentials,
 *   one connection per server shared by its steps, closed when the tenant is removed;
 * - {@link convertMcpToolResult} / {@link convertMcpContent}: MCP results to kosong content;
 * - {@link mcpResourceParts} / {@link mcpPromptMessages}: resources and prompts for the history.
 *
 * @packageDocumentation
 */
export type { McpHttpServerConfig, McpServerConfig, McpSseServerConfig, McpStdioServerConfig } from './mcp-server-config.js';
export {
  DEFAULT_MCP_TIMEOUT_MS,
  describeMcpTool,
  McpToolset,
  type McpToolFilter,
  type McpToolInfo,
  type McpToolsetOptions,
} from './mcp-toolset.js';
export { McpConnectionError } from './mcp-connection-error.js';
export { McpRequestError } from './mcp-request-error.js';
export { McpAuthorizationError } from './mcp-authorization-error.js';
export { McpOAuthTokenProvider, type McpOAuthTokenProviderOptions } from './mcp-oauth-token-provider.js';
export { MCP_MAX_MESSAGE_BYTES, McpMessageTooLargeError } from './mcp-message-limit.js';
export { replayFromAnnotations, type McpReplayOption } from './mcp-replay.js';
export { mcpPlugin, type McpPlugin, type McpPluginOptions } from './mcp-plugin.js';
export {
  defineMcpTenant,
  McpTenantToolset,
  type McpServers,
  type McpTenantDefinition,
  type McpTenantServer,
  type McpTenantToolsetOptions,
} from './mcp-tenant-toolset.js';
export type {
  McpElicitationHandler,
  McpElicitationRequest,
  McpLogEvent,
  McpProgressEvent,
  McpResourceUpdatedEvent,
  McpRoot,
} from './mcp-client-features.js';
export { MCP_SAMPLING_APPROVAL_TOOL, samplingApprovalThrough, type McpApprovalTarget } from './mcp-sampling-approval.js';
export { MCP_SAMPLING_REFUSED_CODE, samplingHistory, type McpSamplingApproval, type McpSamplingOptions, type McpSamplingRequest } from './mcp-sampling.js';
export {
  base64Bytes,
  convertMcpContent,
  convertMcpResourceContents,
  describeResourceLink,
  MCP_MAX_BLOB_BYTES,
  type ConvertMcpContentOptions,
  type McpResourceContents,
} from './mcp-content.js';
export { mcpPromptMessages, mcpResourceParts } from './mcp-history.js';
export {
  convertMcpContentList,
  convertMcpToolResult,
  MCP_MAX_OUTPUT_CHARS,
  MCP_TOOL_ERROR_MESSAGE,
  STRUCTURED_CONTENT_LABEL,
  truncationNote,
  type ConvertMcpToolResultOptions,
} from './mcp-tool-result.js';
