/**
 * Where an MCP server is and how to reach it.
 *
 * @module
 */
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { limitedFetch, type McpMessageTooLargeError } from './mcp-message-limit.js';
import { checkKnownOptions, type KnownOptions } from './options.js';

/**
 * A server run as a child process, spoken to over its stdin and stdout. One process per
 * connection: a reconnect starts a new one.
 */
export interface McpStdioServerConfig {
  readonly type: 'stdio';
  /** The executable (looked up on `PATH`; no shell). */
  readonly command: string;
  readonly args?: readonly string[];
  /**
   * Environment variables of the process, added to a small safe set inherited from this process
   * (`HOME`, `LOGNAME`, `PATH`, `SHELL`, `TERM`, `USER` on POSIX). Nothing else is inherited: pass
   * what the server needs.
   */
  readonly env?: Readonly<Record<string, string>>;
  /** Working directory of the process; default: this process's. */
  readonly cwd?: string;
  /** What happens to the server's stderr; default `inherit` (it goes to this process's stderr). */
  readonly stderr?: 'inherit' | 'ignore';
}

/** A server spoken to over MCP's streamable HTTP transport. One session per connection. */
export interface McpHttpServerConfig {
  readonly type: 'http';
  /** The MCP endpoint, e.g. `http://127.0.0.1:3000/mcp`. */
  readonly url: string | URL;
  /** Headers sent with every request (e.g. `authorization`). */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * OAuth for this server, through the SDK's auth provider interface: the transport sends the
   * provider's access token as a bearer token and, on a `401`, runs the SDK's `auth` flow with it
   * (discovery, then a refresh or the provider's token request) and sends the request again.
   * {@link McpOAuthTokenProvider} is a small in-memory one for a pre-registered client and token;
   * the SDK's `ClientCredentialsProvider` (`@modelcontextprotocol/sdk/client/auth-extensions.js`)
   * does client credentials. A server that still refuses is an {@link McpAuthorizationError}.
   */
  readonly authProvider?: OAuthClientProvider;
  /**
   * Fall back to the legacy HTTP+SSE transport (spec revision 2024-11-05) when the server answers the
   * initialize POST with `400`, `404` or `405`, as the spec's backwards-compatibility section tells
   * clients to (a `401` or `403` is an authorization failure, never a reason to fall back). Default
   * `true`; once a server was found to speak SSE only, the toolset's reconnects use SSE directly.
   */
  readonly sseFallback?: boolean;
}

/**
 * A server spoken to over the legacy HTTP+SSE transport (spec revision 2024-11-05, deprecated by
 * streamable HTTP; the SDK's `SSEClientTransport`): a GET to `url` opens the event stream, whose
 * first event names the endpoint messages are POSTed to. One stream per connection.
 */
export interface McpSseServerConfig {
  readonly type: 'sse';
  /** The SSE endpoint, e.g. `http://127.0.0.1:3001/sse`. */
  readonly url: string | URL;
  /** Headers sent with the GET and every POST (e.g. `authorization`). */
  readonly headers?: Readonly<Record<string, string>>;
  /** OAuth for this server, as for {@link McpHttpServerConfig.authProvider}. */
  readonly authProvider?: OAuthClientProvider;
}

/** An MCP server: {@link McpStdioServerConfig}, {@link McpHttpServerConfig} or {@link McpSseServerConfig}. */
export type McpServerConfig = McpStdioServerConfig | McpHttpServerConfig | McpSseServerConfig;

const STDIO_OPTIONS: KnownOptions<McpStdioServerConfig> = { type: true, command: true, args: true, env: true, cwd: true, stderr: true };
const HTTP_OPTIONS: KnownOptions<McpHttpServerConfig> = { type: true, url: true, headers: true, authProvider: true, sseFallback: true };
const SSE_OPTIONS: KnownOptions<McpSseServerConfig> = { type: true, url: true, headers: true, authProvider: true };

/** The status codes of an initialize POST after which a streamable HTTP server is tried as a legacy SSE one. @internal */
export const SSE_FALLBACK_STATUSES: ReadonlySet<number> = new Set([400, 404, 405]);

/** The SSE config a streamable HTTP config falls back to: the same URL, headers and auth. @internal */
export function sseFallbackOf(server: McpHttpServerConfig): McpSseServerConfig {
  return {
    type: 'sse',
    url: server.url,
    ...(server.headers === undefined ? {} : { headers: server.headers }),
    ...(server.authProvider === undefined ? {} : { authProvider: server.authProvider }),
  };
}

/**
 * Checks a server's config when a toolset is made.
 * @throws TypeError for a config that is not an object, of no known type, or with an option its type does not know.
 * @internal
 */
export function checkServerConfig(server: unknown): void {
  if (typeof server !== 'object' || server === null) throw new TypeError('McpToolset: server must be an object ({ type: \'stdio\', command }, { type: \'http\', url } or { type: \'sse\', url })');
  const { type } = server as { type?: unknown };
  if (type === 'stdio') checkKnownOptions('McpToolset: a stdio server', server, STDIO_OPTIONS);
  else if (type === 'http' || type === 'sse') {
    checkKnownOptions(`McpToolset: an ${type} server`, server, type === 'http' ? HTTP_OPTIONS : SSE_OPTIONS);
    const { authProvider, sseFallback } = server as { authProvider?: unknown; sseFallback?: unknown };
    if (authProvider !== undefined && (typeof authProvider !== 'object' || authProvider === null || typeof (authProvider as { tokens?: unknown }).tokens !== 'function')) {
      throw new TypeError(`McpToolset: an ${type} server's authProvider must be an OAuthClientProvider (an object with tokens(), saveTokens(), …)`);
    }
    if (sseFallback !== undefined && typeof sseFallback !== 'boolean') throw new TypeError(`McpToolset: an http server's sseFallback must be a boolean, not ${JSON.stringify(sseFallback)}`);
  }
  else throw new TypeError(`Unknown MCP server type: ${JSON.stringify(type)}`);
}

/** The bound on one message of the server (HTTP; over stdio the SDK's own bound applies). @internal */
export interface McpMessageLimit {
  readonly maxBytes: number;
  readonly onTooLarge: (error: McpMessageTooLargeError) => void;
}

/** A fresh (not started) SDK transport for a server. @internal */
export function createTransport(server: McpServerConfig, limit: McpMessageLimit): Transport {
  switch (server.type) {
    case 'stdio':
      return new StdioClientTransport({
        command: server.command,
        args: [...(server.args ?? [])],
        ...(server.env === undefined ? {} : { env: { ...server.env } }),
        ...(server.cwd === undefined ? {} : { cwd: server.cwd }),
        stderr: server.stderr ?? 'inherit',
      });
    case 'http':
      return new StreamableHTTPClientTransport(new URL(server.url), {
        fetch: limitedFetch(limit.maxBytes, limit.onTooLarge),
        ...(server.headers === undefined ? {} : { requestInit: { headers: { ...server.headers } } }),
        ...(server.authProvider === undefined ? {} : { authProvider: server.authProvider }),
      });
    case 'sse':
      return new SSEClientTransport(new URL(server.url), {
        fetch: limitedFetch(limit.maxBytes, limit.onTooLarge),
        ...(server.headers === undefined ? {} : { requestInit: { headers: { ...server.headers } } }),
        ...(server.authProvider === undefined ? {} : { authProvider: server.authProvider }),
      });
    default:
      throw new TypeError(`Unknown MCP server type: ${JSON.stringify((server as { type?: unknown }).type)}`);
  }
}

/** A name for a server when none is given: the command's base name, or the URL's host. @internal */
export function defaultServerName(server: McpServerConfig): string {
  if (server.type === 'stdio') return server.command.split(/[\\/]/).pop() || server.command;
  try {
    return new URL(server.url).host;
  } catch {
    return String(server.url);
  }
}
