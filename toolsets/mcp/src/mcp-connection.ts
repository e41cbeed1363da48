/**
 * One connection to an MCP server: an SDK client over one transport (one child process, or one
 * HTTP session), from connect to close. Internal to {@link McpToolset}.
 *
 * @module
 * @internal
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  McpError,
  ProgressNotificationSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type CompleteRequest,
  type CompleteResult,
  type GetPromptResult,
  type LoggingLevel,
  type Progress,
  type Prompt,
  type ReadResourceResult,
  type Resource,
  type ResourceTemplate,
  type ServerCapabilities,
  type Tool as McpToolInfo,
} from '@modelcontextprotocol/sdk/types.js';
import { withChildSignal, withRequestSignal } from './abort.js';
import { clientCapabilities, installClientFeatures, type McpClientFeatures } from './mcp-client-features.js';
import { isStdioBufferOverflow, McpMessageTooLargeError } from './mcp-message-limit.js';
import { createTransport, SSE_FALLBACK_STATUSES, sseFallbackOf, type McpServerConfig } from './mcp-server-config.js';
import { isAuthorizationFailure } from './mcp-authorization-error.js';

/** The client's name and version, as the server sees them. */
const CLIENT_INFO = { name: 'kosong', version: '0.1.0' } as const;
/** The bound of the SDK's stdio read buffer (`ReadBuffer`), in bytes: a larger message closes the connection. */
const SDK_STDIO_MAX_MESSAGE_BYTES = 10 * 1024 * 1024;
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
  /** A request the connection made of its own accord failed, and it goes on (e.g. `logging/setLevel`). */
  readonly onRequestFailed?: (message: string, cause: unknown) => void;
  /** The server said its resource list or its prompt list changed. */
  readonly onListChanged?: (list: 'resources' | 'prompts') => void;
}

/** How a tool is called: with progress, as a task. @internal */
export interface McpCallOptions {
  readonly onProgress?: (progress: Progress) => void;
  /** Run through the task API (`tools/call` with `task`, then `tasks/get` and `tasks/result`). */
  readonly asTask?: boolean;
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
  #lostReason: Error | undefined;
  #closing: Promise<void> | undefined;
  #checkingHealth = false;
  /** The progress callbacks of the calls in flight, by the progress token sent with them. */
  readonly #progress = new Map<string, (progress: Progress) => void>();
  #nextProgressToken = 0;

  private constructor(server: McpServerConfig, timeoutMs: number, events: McpConnectionEvents, features: McpClientFeatures, maxMessageBytes: number) {
    this.#events = events;
    this.#timeoutMs = timeoutMs;
    this.server = server;
    this.#transport = createTransport(server, { maxBytes: maxMessageBytes, onTooLarge: (error) => this.#markLost(error) });
    this.#client = new Client(CLIENT_INFO, { capabilities: clientCapabilities(features) });
    installClientFeatures(this.#client, features);
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
      if (isStdioBufferOverflow(error)) {
        this.#markLost(new McpMessageTooLargeError(SDK_STDIO_MAX_MESSAGE_BYTES));
        return;
      }
      this.#events.onError(error);
      this.#checkHealth();
    };
    this.#client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      if (!this.#lost) this.#events.onToolListChanged(this);
    });
    // Progress is routed here by our own tokens, replacing the SDK's routing: the SDK forgets a
    // request's token when its response arrives, before it handles a notification that came just
    // ahead of the response, so the last progress of a call was lost and reported as an error
    // (typescript-sdk issue #2580). Ours is forgotten only after the call's caller resumed.
    this.#client.setNotificationHandler(ProgressNotificationSchema, (notification) => {
      const { progressToken, progress, total, message } = notification.params;
      this.#progress.get(String(progressToken))?.({
        progress,
        ...(total === undefined ? {} : { total }),
        ...(message === undefined ? {} : { message }),
      });
    });
    this.#client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
      if (!this.#lost) this.#events.onListChanged?.('resources');
    });
    this.#client.setNotificationHandler(PromptListChangedNotificationSchema, () => {
      if (!this.#lost) this.#events.onListChanged?.('prompts');
    });
  }

  /** The server as this connection reached it: a streamable HTTP server that fell back is its SSE config. */
  readonly server: McpServerConfig;

  /**
   * Starts the transport and runs the MCP handshake. On failure everything started is closed
   * again before the error is thrown. A streamable HTTP server that answers the initialize POST with
   * 400, 404 or 405 is tried again over the legacy SSE transport (unless `sseFallback: false`).
   */
  static async open(
    server: McpServerConfig,
    timeoutMs: number,
    events: McpConnectionEvents,
    features: McpClientFeatures,
    logLevel: LoggingLevel | undefined,
    maxMessageBytes: number,
    signal?: AbortSignal,
  ): Promise<McpConnection> {
    try {
      return await McpConnection.#open(server, timeoutMs, events, features, logLevel, maxMessageBytes, signal);
    } catch (error) {
      if (server.type !== 'http' || server.sseFallback === false || signal?.aborted || !(error instanceof StreamableHTTPError) || !SSE_FALLBACK_STATUSES.has(error.code ?? 0)) throw error;
      try {
        return await McpConnection.#open(sseFallbackOf(server), timeoutMs, events, features, logLevel, maxMessageBytes, signal);
      } catch (sseError) {
        if (signal?.aborted || isAuthorizationFailure(sseError)) throw sseError;
        const message = sseError instanceof Error ? sseError.message : String(sseError);
        throw new Error(`streamable HTTP was refused (HTTP ${error.code}: ${error.message}), and the legacy SSE transport failed too: ${message}`, { cause: sseError });
      }
    }
  }

  static async #open(
    server: McpServerConfig,
    timeoutMs: number,
    events: McpConnectionEvents,
    features: McpClientFeatures,
    logLevel: LoggingLevel | undefined,
    maxMessageBytes: number,
    signal?: AbortSignal,
  ): Promise<McpConnection> {
    const connection = new McpConnection(server, timeoutMs, events, features, maxMessageBytes);
    try {
      await withChildSignal(signal, (child) => connection.#client.connect(connection.#transport, { timeout: timeoutMs, signal: child }));
      if (logLevel !== undefined && connection.capabilities.logging !== undefined) {
        // A server that refuses the level still serves its tools: reported, not fatal.
        await withChildSignal(signal, (child) => connection.#client.setLoggingLevel(logLevel, { timeout: timeoutMs, signal: child })).catch((error: unknown) => {
          signal?.throwIfAborted();
          events.onRequestFailed?.(`logging/setLevel ${logLevel} failed: ${error instanceof Error ? error.message : String(error)}`, error);
        });
      }
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

  /** Why the connection broke (not set after `close`). */
  get lostReason(): Error | undefined {
    return this.#lostReason;
  }

  /** What the server announced in the handshake. */
  get capabilities(): ServerCapabilities {
    return this.#client.getServerCapabilities() ?? {};
  }

  /** Whether the server can run tool calls as tasks (`tasks.requests.tools.call`). */
  get runsToolTasks(): boolean {
    return this.capabilities.tasks?.requests?.tools?.call !== undefined;
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

  /**
   * Calls a tool. Aborting `signal` sends `notifications/cancelled` (for a task: `tasks/cancel`)
   * and rejects at once.
   */
  async callTool(name: string, args: Record<string, unknown>, signal: AbortSignal, options: McpCallOptions = {}): Promise<CallToolResult> {
    const { onProgress } = options;
    const token = onProgress ? `kosong-${++this.#nextProgressToken}` : undefined;
    if (token !== undefined) this.#progress.set(token, onProgress!);
    const params = { name, arguments: args, ...(token === undefined ? {} : { _meta: { progressToken: token } }) };
    try {
      if (options.asTask) return await this.#callToolAsTask(params, signal);
      const result = await withRequestSignal(signal, (child) => this.#client.callTool(params, undefined, { signal: child, timeout: this.#timeoutMs }));
      return result as CallToolResult;
    } finally {
      if (token !== undefined) this.#progress.delete(token);
    }
  }

  async #callToolAsTask(params: { name: string; arguments: Record<string, unknown> }, signal: AbortSignal): Promise<CallToolResult> {
    const { name } = params;
    return withChildSignal(signal, async (child) => {
      const requestOptions: RequestOptions = { signal: child, timeout: this.#timeoutMs, task: {} };
      let taskId: string | undefined;
      const cancelTask = (): void => {
        if (taskId !== undefined && !this.#lost) {
          void this.#client.experimental.tasks.cancelTask(taskId, { timeout: HEALTH_CHECK_TIMEOUT_MS }).catch(() => undefined);
        }
      };
      child.addEventListener('abort', cancelTask, { once: true });
      try {
        for await (const message of this.#client.experimental.tasks.callToolStream(params, undefined, requestOptions)) {
          if (message.type === 'taskCreated') taskId = message.task.taskId;
          else if (message.type === 'result') return message.result as CallToolResult;
          else if (message.type === 'error') throw child.aborted ? child.reason : message.error;
        }
        throw new McpError(-32603, `the task of tool ${name} ended without a result`);
      } finally {
        child.removeEventListener('abort', cancelTask);
      }
    });
  }

  /** Every resource of the server (all pages); none if it announces no resources. */
  async listResources(signal?: AbortSignal): Promise<Resource[]> {
    if (this.capabilities.resources === undefined) return [];
    return this.#pages(signal, (params, options) => this.#client.listResources(params, options).then((page) => ({ items: page.resources, nextCursor: page.nextCursor })));
  }

  /** Every resource template of the server (all pages). */
  async listResourceTemplates(signal?: AbortSignal): Promise<ResourceTemplate[]> {
    if (this.capabilities.resources === undefined) return [];
    return this.#pages(signal, (params, options) =>
      this.#client.listResourceTemplates(params, options).then((page) => ({ items: page.resourceTemplates, nextCursor: page.nextCursor })),
    );
  }

  /** Reads one resource. */
  readResource(uri: string, signal?: AbortSignal): Promise<ReadResourceResult> {
    return this.#request(signal, (options) => this.#client.readResource({ uri }, options));
  }

  /** Subscribes to a resource's updates (`notifications/resources/updated`). */
  async subscribeResource(uri: string, signal?: AbortSignal): Promise<void> {
    await this.#request(signal, (options) => this.#client.subscribeResource({ uri }, options));
  }

  /** Ends a subscription. */
  async unsubscribeResource(uri: string, signal?: AbortSignal): Promise<void> {
    await this.#request(signal, (options) => this.#client.unsubscribeResource({ uri }, options));
  }

  /** Every prompt of the server (all pages); none if it announces no prompts. */
  async listPrompts(signal?: AbortSignal): Promise<Prompt[]> {
    if (this.capabilities.prompts === undefined) return [];
    return this.#pages(signal, (params, options) => this.#client.listPrompts(params, options).then((page) => ({ items: page.prompts, nextCursor: page.nextCursor })));
  }

  /** Gets one prompt, with its arguments filled in. */
  getPrompt(name: string, args: Record<string, string>, signal?: AbortSignal): Promise<GetPromptResult> {
    return this.#request(signal, (options) => this.#client.getPrompt({ name, arguments: args }, options));
  }

  /** Asks the server to complete an argument of a prompt or a resource template. */
  complete(params: CompleteRequest['params'], signal?: AbortSignal): Promise<CompleteResult> {
    return this.#request(signal, (options) => this.#client.complete(params, options));
  }

  /** Tells the server the roots changed (it lists them again). */
  async sendRootsListChanged(): Promise<void> {
    await this.#client.sendRootsListChanged();
  }

  #request<T>(signal: AbortSignal | undefined, run: (options: RequestOptions) => Promise<T>): Promise<T> {
    return withChildSignal(signal, (child) => run({ signal: child, timeout: this.#timeoutMs }));
  }

  async #pages<T>(
    signal: AbortSignal | undefined,
    page: (params: { cursor?: string }, options: RequestOptions) => Promise<{ items: T[]; nextCursor?: string | undefined }>,
  ): Promise<T[]> {
    const items: T[] = [];
    let cursor: string | undefined;
    do {
      const params = cursor === undefined ? {} : { cursor };
      const result = await this.#request(signal, (options) => page(params, options));
      items.push(...result.items);
      cursor = result.nextCursor;
    } while (cursor !== undefined && cursor !== '');
    return items;
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
    this.#lostReason = reason;
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
