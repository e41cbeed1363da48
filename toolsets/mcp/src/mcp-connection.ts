/**
 * One connection to an MCP server: an SDK client over one transport (one child process, or one
 * HTTP session), from connect to close. Internal to {@link McpToolset}.
 *
 * @module
 * @internal
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type Tool as McpToolInfo,
} from '@modelcontextprotocol/sdk/types.js';
import { withChildSignal } from './abort.js';
import { createTransport, type McpServerConfig } from './mcp-server-config.js';

/** The client's name and version, as the server sees them. */
const CLIENT_INFO = { name: 'kosong', version: '0.1.0' } as const;
/** The longest a liveness ping may take before the connection is given up. */
const HEALTH_CHECK_TIMEOUT_MS = 5_000;
/** The longest `close` waits for the session to end and the process to exit (the SDK sends SIGKILL within ~4 s). */
const CLOSE_TIMEOUT_MS = 6_000;

/** What a connection tells its owner. @internal */
export interface McpConnectionEvents {
  /** The server said its tool list changed. */
  readonly onToolListChanged: (connection: McpConnection) => void;
  /** The connection broke (process exited, stream lost and the server unreachable); once, not after `close` nor for a failed handshake. */
  readonly onLost: (connection: McpConnection, reason: Error) => void;
  /** A transport or protocol error the connection survived (or not: see `onLost`). */
  readonly onError: (error: Error) => void;
}

/** @internal */
export class McpConnection {
  readonly #client: Client;
  readonly #transport: Transport;
  readonly #events: McpConnectionEvents;
  readonly #timeoutMs: number;
  readonly #transportClosed: Promise<void>;
  /** Whether the handshake completed (a connection that never was is not reported as lost). */
  #established = false;
  #lost = false;
  #closing: Promise<void> | undefined;
  #checkingHealth = false;

  private constructor(server: McpServerConfig, timeoutMs: number, events: McpConnectionEvents) {
    this.#events = events;
    this.#timeoutMs = timeoutMs;
    this.#transport = createTransport(server);
    this.#client = new Client(CLIENT_INFO, { capabilities: {} });
    let closed!: () => void;
    this.#transportClosed = new Promise((resolve) => (closed = resolve));
    this.#client.onclose = () => {
      closed();
      this.#markLost(new Error('the connection closed (the server exited or ended the session)'));
    };
    this.#client.onerror = (error) => {
      // Before the handshake completes, a failure is the handshake's (thrown by `open`); after close,
      // the transport reports its aborted streams. Neither is news.
      if (this.#lost || !this.#established) return;
      this.#events.onError(error);
      this.#checkHealth();
    };
    this.#client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      if (!this.#lost) this.#events.onToolListChanged(this);
    });
  }

  /**
   * Starts the transport and runs the MCP handshake. On failure everything started is closed
   * again before the error is thrown.
   */
  static async open(server: McpServerConfig, timeoutMs: number, events: McpConnectionEvents, signal?: AbortSignal): Promise<McpConnection> {
    const connection = new McpConnection(server, timeoutMs, events);
    try {
      await withChildSignal(signal, (child) => connection.#client.connect(connection.#transport, { timeout: timeoutMs, signal: child }));
      connection.#established = true;
      return connection;
    } catch (error) {
      await connection.close();
      throw error;
    }
  }

  /** Whether the connection broke or was closed; a lost connection is never used again. */
  get lost(): boolean {
    return this.#lost;
  }

  /** Whether the server announced tools at all. */
  get hasTools(): boolean {
    return this.#client.getServerCapabilities()?.tools !== undefined;
  }

  /** Every tool of the server (all pages), or none if it does not announce tools. */
  async listTools(signal?: AbortSignal): Promise<McpToolInfo[]> {
    if (!this.hasTools) return [];
    const tools: McpToolInfo[] = [];
    let cursor: string | undefined;
    do {
      const params = cursor === undefined ? {} : { cursor };
      const page = await withChildSignal(signal, (child) => this.#client.listTools(params, { timeout: this.#timeoutMs, signal: child }));
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined && cursor !== '');
    return tools;
  }

  /** Calls a tool. Aborting `signal` sends `notifications/cancelled` and rejects at once. */
  async callTool(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult> {
    const result = await withChildSignal(signal, (child) =>
      this.#client.callTool({ name, arguments: args }, undefined, { signal: child, timeout: this.#timeoutMs }),
    );
    return result as CallToolResult;
  }

  /** Gives the connection up (calls in flight fail at once) and closes it. */
  abandon(reason: Error): void {
    this.#markLost(reason);
  }

  /**
   * Ends the HTTP session (DELETE) or the process (stdin closed, then SIGTERM, then SIGKILL) and
   * waits until it is over. Calls in flight fail with a "connection closed" error. Idempotent.
   */
  close(): Promise<void> {
    this.#lost = true;
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    const transport = this.#transport;
    if (transport instanceof StreamableHTTPClientTransport && transport.sessionId !== undefined) {
      await withTimeout(transport.terminateSession().catch(() => undefined), CLOSE_TIMEOUT_MS);
    }
    await withTimeout(this.#client.close().catch(() => undefined), CLOSE_TIMEOUT_MS);
    await withTimeout(this.#transportClosed, CLOSE_TIMEOUT_MS);
  }

  #markLost(reason: Error): void {
    if (this.#lost) return;
    this.#lost = true;
    if (this.#established) this.#events.onLost(this, reason);
    void this.close();
  }

  /**
   * After a transport error, pings the server: if it does not answer, the connection is given up,
   * so calls waiting on a response that will never come (an HTTP stream cut by a crashed server)
   * fail at once instead of at their timeout.
   */
  #checkHealth(): void {
    if (this.#lost || this.#checkingHealth) return;
    this.#checkingHealth = true;
    this.#client
      .ping({ timeout: Math.min(this.#timeoutMs, HEALTH_CHECK_TIMEOUT_MS) })
      .then(
        () => undefined,
        (error: unknown) => this.#markLost(new Error(`the server stopped answering: ${error instanceof Error ? error.message : String(error)}`)),
      )
      .finally(() => {
        this.#checkingHealth = false;
      });
  }
}

function withTimeout(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  return Promise.race([promise.then(() => undefined), timeout]).finally(() => clearTimeout(timer));
}
