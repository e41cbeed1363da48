/**
 * The typed error of an MCP server that refuses the client's credentials.
 *
 * @module
 */
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { SseError } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { OAuthError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { errorMarker, hasErrorMarker, markError } from '@kosong/core/toolset-kit';
import { McpConnectionError } from './mcp-connection-error.js';

const MCP_AUTHORIZATION_ERROR = errorMarker('McpAuthorizationError');

/**
 * An HTTP MCP server refused the client (`401`/`403`), and no credentials the client has could
 * change that: no `authProvider` was given, or its tokens could not be renewed (a refused refresh,
 * a flow that needs a person in a browser). An {@link McpConnectionError} too: code that catches
 * those catches this. The SDK's error is the `cause`.
 */
export class McpAuthorizationError extends McpConnectionError {
  constructor(server: string, message: string, options?: ErrorOptions) {
    super(server, message, options);
    this.name = 'McpAuthorizationError';
    markError(this, MCP_AUTHORIZATION_ERROR);
  }

  /** Whether `error` is an {@link McpAuthorizationError} (works across duplicated package copies). */
  static override isInstance(error: unknown): error is McpAuthorizationError {
    return hasErrorMarker(error, MCP_AUTHORIZATION_ERROR);
  }
}

/** Whether an SDK error says the server refused the client's credentials. @internal */
export function isAuthorizationFailure(error: unknown): boolean {
  if (McpAuthorizationError.isInstance(error)) return true;
  if (error instanceof UnauthorizedError || error instanceof OAuthError) return true;
  return (error instanceof StreamableHTTPError || error instanceof SseError) && (error.code === 401 || error.code === 403);
}
