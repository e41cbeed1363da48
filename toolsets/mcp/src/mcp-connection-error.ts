import { errorMarker, hasErrorMarker, markError } from '@kosong/core/toolset-kit';

const MCP_CONNECTION_ERROR = errorMarker('McpConnectionError');

/**
 * An MCP server could not be reached, or its connection broke. Names the server; the SDK's error
 * is the `cause`. Thrown by {@link McpToolset.connect}; given to the `onError` option for problems
 * in the background (a lost connection, a failed tool-list refresh).
 */
export class McpConnectionError extends Error {
  constructor(
    /** The server's name (see `McpToolsetOptions.name`). */
    readonly server: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(`MCP server "${server}": ${message}`, options);
    this.name = 'McpConnectionError';
    markError(this, MCP_CONNECTION_ERROR);
  }

  /** Whether `error` is an {@link McpConnectionError} (works across duplicated package copies). */
  static isInstance(error: unknown): error is McpConnectionError {
    return hasErrorMarker(error, MCP_CONNECTION_ERROR);
  }
}
