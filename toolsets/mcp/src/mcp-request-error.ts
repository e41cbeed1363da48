import { errorMarker, hasErrorMarker, markError } from '@kosong/core/toolset-kit';
import { McpError } from '@modelcontextprotocol/sdk/types.js';

const MCP_REQUEST_ERROR = errorMarker('McpRequestError');

/**
 * A request of the resources and prompts API (`resources/read`, `prompts/get`, `completion/complete`,
 * …) failed: the server answered with an error, or did not answer in time. Names the server and the
 * method; `code` is the JSON-RPC error code when the server gave one; the SDK's error is the `cause`.
 * (A server that cannot be reached at all is an `McpConnectionError`.)
 */
export class McpRequestError extends Error {
  /** The JSON-RPC error code, when the server (or the SDK) gave one, e.g. -32602 for bad params. */
  readonly code: number | undefined;

  constructor(
    /** The server's name. */
    readonly server: string,
    /** The MCP method, e.g. `resources/read`. */
    readonly method: string,
    cause: unknown,
  ) {
    super(`MCP server "${server}": ${method} failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'McpRequestError';
    this.code = cause instanceof McpError ? cause.code : undefined;
    markError(this, MCP_REQUEST_ERROR);
  }

  /** Whether `error` is an {@link McpRequestError} (works across duplicated package copies). */
  static isInstance(error: unknown): error is McpRequestError {
    return hasErrorMarker(error, MCP_REQUEST_ERROR);
  }
}
