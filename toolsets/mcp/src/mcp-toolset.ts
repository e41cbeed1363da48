import {
  toolError,
  type Tool,
  type ReplayPolicy,
  type ToolCall,
  type ToolContext,
  type ToolResult,
  type ToolReturnValue,
  type Toolset,
} from '@kosong/core';
import { describeError, parseToolArguments, toolCancelled, toolNotFound, toolParseError, toolRuntimeError, toolValidateError } from '@kosong/core/toolset-kit';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ErrorCode,
  McpError,
  type CompleteRequest,
  type CompleteResult,
  type GetPromptResult,
  type LoggingLevel,
  type Progress,
  type Prompt,
  type ReadResourceResult,
  type Resource,
  type ResourceTemplate,
  type Tool as McpToolInfo,
} from '@modelcontextprotocol/sdk/types.js';
import { untilAborted } from './abort.js';
import {
  deliver,
  type McpClientFeatures,
  type McpElicitationHandler,
  type McpLogEvent,
  type McpProgressEvent,
  type McpResourceUpdatedEvent,
  type McpRoot,
} from './mcp-client-features.js';
import { McpConnection, type McpConnectionEvents } from './mcp-connection.js';
import { McpConnectionError } from './mcp-connection-error.js';
import { isAuthorizationFailure, McpAuthorizationError } from './mcp-authorization-error.js';
import { checkFeatureOptions } from './mcp-feature-options.js';
import { MCP_MAX_MESSAGE_BYTES, McpMessageTooLargeError } from './mcp-message-limit.js';
import { McpRequestError } from './mcp-request-error.js';
import type { McpSamplingOptions } from './mcp-sampling.js';
import { checkMcpReplayOption, mcpReplayPolicy, type McpReplayOption } from './mcp-replay.js';
import { checkServerConfig, defaultServerName, type McpServerConfig } from './mcp-server-config.js';
import { convertMcpToolResult, MCP_MAX_OUTPUT_CHARS } from './mcp-tool-result.js';
import { checkKnownOptions, type KnownOptions } from './options.js';

/** A tool as the MCP server describes it (`tools/list`), with its real (unprefixed) name. */
export type { McpToolInfo };

/** Which of a server's tools the model is told about: a list of (server-side) names, or a predicate. */
export type McpToolFilter = readonly string[] | ((tool: McpToolInfo) => boolean);

/** Options of an {@link McpToolset}. */
export interface McpToolsetOptions {
  /** The server to connect to. */
  readonly server: McpServerConfig;
  /** The server's name, in tool descriptions and errors; default: the command's base name, or the URL's host. */
  readonly name?: string;
  /** Prepended to every tool name the model sees (`prefix + name`); the server gets the real name. */
  readonly prefix?: string;
  /** Which tools to offer; default: all. Applied again whenever the list is refreshed. */
  readonly filter?: McpToolFilter;
  /** Time limit of each request (handshake, listing, call), in ms; default 60 000. */
  readonly timeoutMs?: number;
  /** Output budget of a call result in characters, shared by text and media URLs; default 100 000. */
  readonly maxOutputChars?: number;
  /**
   * The largest embedded image resource (decoded bytes) given as an image part; larger ones, and
   * binary resources of other types, become a short text naming URI, mime type and size. Default 1 MiB.
   */
  readonly maxBlobBytes?: number;
  /**
   * The roots offered to the server (`roots/list`), e.g. the workspace: `[{ uri: 'file:///work', name: 'work' }]`.
   * Without it the client does not announce roots. {@link McpToolset.setRoots} changes them (the server is notified).
   */
  readonly roots?: readonly McpRoot[];
  /**
   * Sampling (`sampling/createMessage`): the provider that answers the server's requests, and the
   * approval callback asked before each (no callback: every request is refused with an MCP error).
   * Without it the client does not announce sampling.
   */
  readonly sampling?: McpSamplingOptions;
  /**
   * Answers elicitations (`elicitation/create`, form mode): the server asks the user for input.
   * Form elicitation is always announced; without a handler every request is declined.
   */
  readonly elicitation?: McpElicitationHandler;
  /** Progress of a tool call (`notifications/progress`); asked for on every call when given. */
  readonly onProgress?: (event: McpProgressEvent) => void;
  /** The server's log messages (`notifications/message`). */
  readonly onLog?: (event: McpLogEvent) => void;
  /** The least level of log messages the server should send (`logging/setLevel` after connect), if it logs. */
  readonly logLevel?: LoggingLevel;
  /** A subscribed resource changed (see {@link McpToolset.subscribeResource}). */
  readonly onResourceUpdated?: (event: McpResourceUpdatedEvent) => void;
  /** The server's resource list or prompt list changed: list them again when needed. */
  readonly onListChanged?: (list: 'resources' | 'prompts') => void;
  /**
   * The largest message the server may send over HTTP, in bytes (a JSON response, or one SSE event);
   * a larger one gives the calls in flight an error result and the connection is given up (the next
   * call reconnects). Default 10 MiB. Over stdio the SDK's own bound (10 MiB) applies.
   */
  readonly maxMessageBytes?: number;
  /** Debug notes: what the toolset decided and why (e.g. a task-only tool it does not offer). Must not throw. */
  readonly onDebug?: (message: string) => void;
  /**
   * The description the model sees; default: the original kosong's, which says the tool is an MCP
   * tool of server `name` and then gives the server's description.
   */
  readonly describeTool?: (tool: McpToolInfo, serverName: string) => string;
  /**
   * The replay policies of the server's tools: what may happen to a call that was interrupted (its
   * start recorded, its outcome not) when its step is done again (see `ReplayPolicy` in `@kosong/core`).
   * By default the server's annotations decide: `readOnlyHint: true` or `idempotentHint: true` →
   * `'safe'` (run again), otherwise `'never'` (the model is told the call was interrupted). Give a
   * record by the tools' names on the server (unprefixed), or a function of the listed tool
   * (`undefined`: its annotations decide); `() => 'never'` trusts no annotation. A function that
   * throws or answers no policy gives `'never'`, reported to `onError`.
   *
   * @example { replay: { search: 'safe', send_email: 'ask' } }
   */
  readonly replay?: McpReplayOption;
  /** Called when {@link McpToolset.tools} changed (after a `list_changed` notification or a reconnect). */
  readonly onToolsChanged?: (tools: readonly Tool[]) => void;
  /**
   * Told about problems in the background that no call reports: a lost connection, a failed
   * refresh of the tool list, transport errors. Default: ignored. Must not throw (it is caught).
   */
  readonly onError?: (error: McpConnectionError) => void;
}

/** The options of {@link McpToolsetOptions}, by name. @internal */
export const MCP_TOOLSET_OPTIONS: KnownOptions<McpToolsetOptions> = {
  server: true,
  name: true,
  prefix: true,
  filter: true,
  timeoutMs: true,
  maxOutputChars: true,
  maxBlobBytes: true,
  roots: true,
  sampling: true,
  elicitation: true,
  onProgress: true,
  onLog: true,
  logLevel: true,
  onResourceUpdated: true,
  onListChanged: true,
  onDebug: true,
  maxMessageBytes: true,
  describeTool: true,
  replay: true,
  onToolsChanged: true,
  onError: true,
};

/** The default time limit of MCP requests, in ms. */
export const DEFAULT_MCP_TIMEOUT_MS = 60_000;

/** The description the original kosong (kimi-cli's `MCPTool`) gives an MCP tool. */
export function describeMcpTool(tool: McpToolInfo, serverName: string): string {
  return `This is an MCP (Model Context Protocol) tool from MCP server \`${serverName}\`.\n\n${tool.description || 'No description provided.'}`;
}

/** A tool as the model sees it, and the server-side tool it stands for. */
interface OfferedTool {
  readonly tool: Tool;
  readonly mcp: McpToolInfo;
  readonly replay: ReplayPolicy;
  /** Whether it runs through the task API (`execution.taskSupport: 'required'`). */
  readonly asTask: boolean;
}

/**
 * The tools of one MCP server, as a kosong {@link Toolset}.
 *
 * - The tool list is fetched on connect and again whenever the server sends
 *   `notifications/tools/list_changed`; {@link McpToolset.tools} always gives the latest.
 * - `handle` parses the arguments (a parse error is an error result), calls the tool with the
 *   call's abort signal (an abort sends `notifications/cancelled` to the server and settles the call
 *   at once) and converts the result (spec §5.8; `isError` gives an error result).
 * - If the server crashes or the connection breaks, calls in flight get error results at once, and
 *   the next call reconnects (a new process, or a new HTTP session). Nothing ever rejects.
 * - {@link McpToolset.replayPolicy} answers each tool's replay policy: the server's annotations
 *   (`readOnlyHint`, `idempotentHint`), or the user's `replay` option.
 * - {@link McpToolset.close} ends the process or session; it is final and idempotent.
 * - The client side of MCP (spec revision 2025-11-25, the SDK's `LATEST_PROTOCOL_VERSION`): roots
 *   (`roots`, {@link McpToolset.setRoots}), sampling through a `ChatProvider` after an approval
 *   (`sampling`), form elicitation (`elicitation`; declined without it), progress and log
 *   notifications (`onProgress`, `onLog`), and the resources and prompts API
 *   ({@link McpToolset.readResource}, {@link McpToolset.getPrompt}, {@link McpToolset.complete}, …).
 * - A tool that must run as a task (`execution.taskSupport: 'required'`) runs through the SDK's task
 *   API, or is not offered when the server does not announce task-based calls (told to `onDebug`).
 *
 * @example
 * const fs = await McpToolset.connect({
 *   name: 'fs',
 *   server: { type: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '.'] },
 *   prefix: 'fs_',
 * });
 * try {
 *   const result = await step({ provider, systemPrompt, toolset: fs, history });
 * } finally {
 *   await fs.close();
 * }
 */
export class McpToolset implements Toolset {
  /** The server's name, as used in descriptions and errors. */
  readonly name: string;

  readonly #options: McpToolsetOptions;
  readonly #replay: McpReplayOption | undefined;
  readonly #timeoutMs: number;
  readonly #closeController = new AbortController();
  readonly #events: McpConnectionEvents;
  readonly #features: McpClientFeatures;
  #roots: readonly McpRoot[];
  readonly #subscriptions = new Set<string>();
  /** The tools of the listing before the last: a step that started with them can still call them. */
  #retired = new Map<string, OfferedTool>();
  #connection: McpConnection | undefined;
  #connecting: Promise<McpConnection> | undefined;
  #offered = new Map<string, OfferedTool>();
  #tools: readonly Tool[] = Object.freeze([]);
  #listed = false;
  #refreshing = false;
  #refreshAgain = false;
  #closing: Promise<void> | undefined;
  /** The server as last reached: a streamable HTTP server found to speak legacy SSE only is its SSE config from then on. */
  #server: McpServerConfig;

  /**
   * A toolset that is not connected yet: call {@link McpToolset.connect} (or let the first call connect).
   *
   * @throws TypeError for an option it does not know (in `server` too), or a `replay` option that is
   *   neither a record of replay policies nor a function.
   */
  constructor(options: McpToolsetOptions) {
    checkKnownOptions('McpToolset', options, MCP_TOOLSET_OPTIONS);
    checkServerConfig(options.server);
    checkFeatureOptions(options as unknown as Readonly<Record<string, unknown>>);
    this.#replay = checkMcpReplayOption(options.replay);
    this.#options = options;
    this.#server = options.server;
    this.name = options.name ?? defaultServerName(options.server);
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_MCP_TIMEOUT_MS;
    this.#events = {
      onToolListChanged: (connection) => this.#scheduleRefresh(connection),
      onLost: (_connection, reason) => this.#report(`lost the connection: ${reason.message}`, reason),
      onError: (error) => this.#report(`transport error: ${error.message}`, error),
      onRequestFailed: (message, cause) => this.#report(message, cause),
      onListChanged: (list) => deliver(this.#features, 'onListChanged', () => options.onListChanged?.(list)),
    };
    this.#roots = freezeRoots(options.roots ?? []);
    this.#features = {
      server: this.name,
      roots: options.roots === undefined ? undefined : () => this.#roots,
      sampling: options.sampling,
      elicitation: options.elicitation,
      onLog: options.onLog,
      onResourceUpdated: options.onResourceUpdated,
      onCallbackError: (what, error) => this.#report(`${what} threw: ${describeError(error)}`, error),
    };
  }

  /**
   * Creates a toolset and connects it: starts the server (stdio) or a session (HTTP), and lists its tools.
   *
   * @throws {McpConnectionError} if the server cannot be reached or does not complete the handshake;
   *   `TypeError` for an option it does not know (before anything starts).
   */
  static async connect(options: McpToolsetOptions): Promise<McpToolset> {
    const toolset = new McpToolset(options);
    await toolset.connect();
    return toolset;
  }

  /** The tools the model is told about: the server's (filtered, prefixed), as of the last listing. */
  get tools(): readonly Tool[] {
    return this.#tools;
  }

  /** Whether a connection is up now (a lost one is re-established by the next call). */
  get connected(): boolean {
    return this.#connection !== undefined && !this.#connection.lost;
  }

  /**
   * The transport of the live (or last) connection: `'stdio'`, `'http'` (streamable HTTP) or `'sse'`
   * (legacy HTTP+SSE: configured so, or a streamable HTTP server that fell back); `undefined` before
   * the first connection.
   */
  get transport(): McpServerConfig['type'] | undefined {
    return this.#connection?.server.type;
  }

  /** Whether {@link McpToolset.close} was called. */
  get closed(): boolean {
    return this.#closing !== undefined;
  }

  /**
   * Connects if not connected (and lists the tools). Concurrent calls share one attempt.
   *
   * @throws {McpConnectionError} if the server cannot be reached, or the toolset is closed.
   */
  async connect(): Promise<void> {
    await this.#ensureConnection(undefined);
  }

  /**
   * Lists the tools again now (connecting if needed) and returns the new {@link McpToolset.tools}.
   *
   * @throws {McpConnectionError} if the server cannot be reached or the listing fails.
   */
  async refreshTools(): Promise<readonly Tool[]> {
    const connection = await this.#ensureConnection(undefined);
    try {
      this.#setTools(await connection.listTools(this.#closeController.signal));
    } catch (error) {
      throw this.#error(`listing tools failed: ${describeError(error)}`, error);
    }
    return this.#tools;
  }

  /** Handles one call. Never rejects: every failure is an error result. */
  handle(toolCall: ToolCall, context: ToolContext): Promise<ToolResult> {
    return this.#call(toolCall, context.signal).then(
      (returnValue) => ({ toolCallId: toolCall.id, returnValue }),
      (error: unknown) => ({ toolCallId: toolCall.id, returnValue: toolRuntimeError(describeError(error)) }),
    );
  }

  /**
   * The replay policy of a call (see {@link McpToolsetOptions.replay}), as of the last listing of the
   * tools; `'never'` for a name the toolset does not offer.
   */
  replayPolicy(toolCall: ToolCall): ReplayPolicy {
    return this.#offered.get(toolCall.function.name)?.replay ?? 'never';
  }

  /**
   * Closes the toolset: ends the server process (stdio: stdin closed, then SIGTERM, then SIGKILL)
   * or the HTTP session (DELETE), and waits until that is done. Calls in flight get error results;
   * later calls too. Idempotent: every call returns the same promise.
   */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    this.#closeController.abort(new McpConnectionError(this.name, 'the toolset was closed'));
    await this.#connecting?.catch(() => undefined);
    await this.#connection?.close();
    this.#offered = new Map();
    this.#retired = new Map();
    this.#tools = Object.freeze([]);
  }

  async #call(call: ToolCall, signal: AbortSignal): Promise<ToolReturnValue> {
    const name = call.function.name;
    if (this.closed) return toolRuntimeError(`the MCP server \`${this.name}\` is closed`);
    if (!this.#listed) {
      try {
        await this.#ensureConnection(signal);
      } catch (error) {
        return this.#failure(name, error, signal, undefined);
      }
    }
    const offered = this.#offered.get(name) ?? this.#retired.get(name);
    if (!offered) return toolNotFound(name);
    const parsed = parseToolArguments(call.function.arguments);
    if (!parsed.ok) return toolParseError(parsed.error);
    const args = parsed.value;
    if (typeof args !== 'object' || args === null || Array.isArray(args)) {
      return toolValidateError(`the arguments must be a JSON object, not ${args === null ? 'null' : Array.isArray(args) ? 'an array' : `a ${typeof args}`}`);
    }
    if (signal.aborted) return toolCancelled(name, signal.reason);

    let connection: McpConnection | undefined;
    try {
      connection = await this.#ensureConnection(signal);
      const onProgress = this.#options.onProgress;
      const callOptions = {
        asTask: offered.asTask,
        ...(onProgress
          ? {
              onProgress: ({ progress, total, message }: Progress) =>
                deliver(this.#features, 'onProgress', () =>
                  onProgress({
                    type: 'mcp.progress',
                    server: this.name,
                    toolName: name,
                    toolCallId: call.id,
                    progress,
                    ...(total === undefined ? {} : { total }),
                    ...(message === undefined ? {} : { message }),
                  }),
                ),
            }
          : {}),
      };
      let result;
      try {
        result = await connection.callTool(offered.mcp.name, args as Record<string, unknown>, signal, callOptions);
      } catch (error) {
        if (!isSessionExpired(error) || signal.aborted) throw error;
        // The server forgot the session (it restarted): the call never ran, so run it in a new session.
        connection.abandon(new Error('the server no longer knows the session'));
        connection = await this.#ensureConnection(signal);
        result = await connection.callTool(offered.mcp.name, args as Record<string, unknown>, signal, callOptions);
      }
      return convertMcpToolResult(result, {
        maxOutputChars: this.#options.maxOutputChars ?? MCP_MAX_OUTPUT_CHARS,
        ...(this.#options.maxBlobBytes === undefined ? {} : { maxBlobBytes: this.#options.maxBlobBytes }),
      });
    } catch (error) {
      return this.#failure(name, error, signal, connection);
    }
  }

  /** The error result for a call that failed with `error`. */
  #failure(name: string, error: unknown, signal: AbortSignal, connection: McpConnection | undefined): ToolReturnValue {
    if (signal.aborted) return toolCancelled(name, signal.reason);
    if (this.closed) return toolRuntimeError(`the MCP server \`${this.name}\` was closed during the call`);
    if (McpConnectionError.isInstance(error)) return toolRuntimeError(error.message);
    if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
      return toolError({
        message: `Timeout while calling MCP tool \`${name}\`. You may explain to the user that the timeout config is set too low.`,
        brief: 'Timeout',
      });
    }
    if (connection?.lost) {
      const reason = connection.lostReason;
      return toolRuntimeError(
        `the MCP server \`${this.name}\` disconnected during the call (the tool may or may not have run; the next call reconnects): ${McpMessageTooLargeError.isInstance(reason) ? reason.message : describeError(error)}`,
      );
    }
    return toolRuntimeError(describeError(error));
  }

  /** The live connection, or a new one (shared by concurrent callers); rejects when `signal` aborts. */
  #ensureConnection(signal: AbortSignal | undefined): Promise<McpConnection> {
    const current = this.#connection;
    if (current && !current.lost) return Promise.resolve(current);
    if (this.closed) return Promise.reject(this.#error('the toolset is closed'));
    if (!this.#connecting) {
      const connecting = this.#open();
      this.#connecting = connecting;
      connecting.then(
        () => this.#connecting === connecting && (this.#connecting = undefined),
        () => this.#connecting === connecting && (this.#connecting = undefined),
      );
    }
    return signal ? untilAborted(this.#connecting, signal) : this.#connecting;
  }

  async #open(): Promise<McpConnection> {
    const closing = this.#closeController.signal;
    let connection: McpConnection;
    try {
      connection = await McpConnection.open(this.#server, this.#timeoutMs, this.#events, this.#features, this.#options.logLevel, this.#options.maxMessageBytes ?? MCP_MAX_MESSAGE_BYTES, closing);
    } catch (error) {
      if (closing.aborted) throw closing.reason;
      if (isAuthorizationFailure(error)) throw new McpAuthorizationError(this.name, `not authorized: ${describeError(error)}`, { cause: error });
      throw this.#error(`cannot connect: ${error instanceof StreamableHTTPError ? `HTTP ${error.code}: ` : ''}${describeError(error)}`, error);
    }
    try {
      const tools = await connection.listTools(closing);
      closing.throwIfAborted();
      await this.#resubscribe(connection);
      closing.throwIfAborted();
      this.#connection = connection;
      if (connection.server !== this.#server) {
        this.#debug('the server refused streamable HTTP and speaks the legacy HTTP+SSE transport: using it from now on');
        this.#server = connection.server;
      }
      this.#setTools(tools);
      return connection;
    } catch (error) {
      await connection.close();
      throw closing.aborted ? closing.reason : this.#error(`listing tools failed: ${describeError(error)}`, error);
    }
  }

  /** Refreshes the list after `list_changed`: one listing at a time, once more if notified meanwhile. */
  #scheduleRefresh(connection: McpConnection): void {
    if (this.#refreshing) {
      this.#refreshAgain = true;
      return;
    }
    this.#refreshing = true;
    void (async () => {
      try {
        do {
          this.#refreshAgain = false;
          const tools = await connection.listTools(this.#closeController.signal);
          if (connection !== this.#connection || connection.lost || this.closed) return;
          this.#setTools(tools);
        } while (this.#refreshAgain);
      } catch (error) {
        if (!connection.lost && !this.closed) this.#report(`refreshing the tool list failed: ${describeError(error)}`, error);
      } finally {
        this.#refreshing = false;
      }
    })();
  }

  #setTools(mcpTools: readonly McpToolInfo[]): void {
    const { filter, prefix = '', describeTool = describeMcpTool } = this.#options;
    const offered = new Map<string, OfferedTool>();
    const runsTasks = this.#connection?.runsToolTasks ?? false;
    for (const mcp of mcpTools) {
      if (filter !== undefined && !(typeof filter === 'function' ? filter(mcp) : filter.includes(mcp.name))) continue;
      const name = prefix + mcp.name;
      if (offered.has(name)) continue; // a server should not list a name twice; the first one wins
      const asTask = mcp.execution?.taskSupport === 'required';
      if (asTask && !runsTasks) {
        this.#debug(`tool \`${mcp.name}\` is not offered: it must run as a task (execution.taskSupport 'required') and the server does not announce task-based tool calls (tasks.requests.tools.call)`);
        continue;
      }
      const tool: Tool = Object.freeze({ name, description: describeTool(mcp, this.name), parameters: mcp.inputSchema });
      offered.set(name, { tool, mcp, replay: this.#replayOf(mcp), asTask });
    }
    const tools = Object.freeze([...offered.values()].map((o) => o.tool));
    const changed = this.#listed && JSON.stringify(tools) !== JSON.stringify(this.#tools);
    if (changed) this.#retired = this.#offered;
    this.#offered = offered;
    this.#tools = tools;
    this.#listed = true;
    if (changed && this.#options.onToolsChanged) {
      try {
        this.#options.onToolsChanged(tools);
      } catch (error) {
        this.#report(`onToolsChanged threw: ${describeError(error)}`, error);
      }
    }
  }

  /** The replay policy of a listed tool; `'never'` (reported) when the user's function fails. */
  #replayOf(mcp: McpToolInfo): ReplayPolicy {
    try {
      return mcpReplayPolicy(mcp, this.#replay);
    } catch (error) {
      this.#report(`${describeError(error)}; the tool's calls are not run again after an interruption`, error);
      return 'never';
    }
  }

  /**
   * Changes the roots offered to the server and notifies it (`notifications/roots/list_changed`),
   * if connected; it lists them again.
   *
   * @throws TypeError if the toolset was made without the `roots` option (roots were not announced),
   *   or for a root without a string `uri`.
   */
  async setRoots(roots: readonly McpRoot[]): Promise<void> {
    if (this.#options.roots === undefined) throw new TypeError('McpToolset.setRoots: the toolset was made without the roots option, so roots were not announced to the server');
    checkFeatureOptions({ roots });
    this.#roots = freezeRoots(roots);
    const connection = this.#connection;
    if (connection && !connection.lost) {
      try {
        await connection.sendRootsListChanged();
      } catch (error) {
        if (!connection.lost) throw this.#error(`notifying the new roots failed: ${describeError(error)}`, error);
      }
    }
  }

  /** The roots offered now. */
  get roots(): readonly McpRoot[] {
    return this.#roots;
  }

  /**
   * Every resource the server lists (all pages; none if it has no resources).
   * @throws {McpConnectionError} if the server cannot be reached; {@link McpRequestError} if it answers with an error.
   */
  listResources(options: { readonly signal?: AbortSignal } = {}): Promise<Resource[]> {
    return this.#ask('resources/list', options.signal, (connection, signal) => connection.listResources(signal));
  }

  /** Every resource template the server lists (URI templates, e.g. `demo://resource/dynamic/text/{resourceId}`). Throws as {@link McpToolset.listResources}. */
  listResourceTemplates(options: { readonly signal?: AbortSignal } = {}): Promise<ResourceTemplate[]> {
    return this.#ask('resources/templates/list', options.signal, (connection, signal) => connection.listResourceTemplates(signal));
  }

  /**
   * Reads one resource (`resources/read`); {@link mcpResourceParts} turns the result into content parts.
   * @throws {McpRequestError} if the server answers with an error (e.g. an unknown URI); {@link McpConnectionError} if it cannot be reached.
   */
  readResource(uri: string, options: { readonly signal?: AbortSignal } = {}): Promise<ReadResourceResult> {
    checkString('McpToolset.readResource: uri', uri);
    return this.#ask('resources/read', options.signal, (connection, signal) => connection.readResource(uri, signal));
  }

  /**
   * Subscribes to a resource: the server sends `notifications/resources/updated`, given to
   * `onResourceUpdated`. Kept across reconnects (subscribed again in the new session).
   * @throws {McpRequestError} if the server refuses (e.g. it does not support subscriptions).
   */
  async subscribeResource(uri: string, options: { readonly signal?: AbortSignal } = {}): Promise<void> {
    checkString('McpToolset.subscribeResource: uri', uri);
    await this.#ask('resources/subscribe', options.signal, (connection, signal) => connection.subscribeResource(uri, signal));
    this.#subscriptions.add(uri);
  }

  /** Ends a subscription made with {@link McpToolset.subscribeResource}. Throws as it does. */
  async unsubscribeResource(uri: string, options: { readonly signal?: AbortSignal } = {}): Promise<void> {
    checkString('McpToolset.unsubscribeResource: uri', uri);
    this.#subscriptions.delete(uri);
    await this.#ask('resources/unsubscribe', options.signal, (connection, signal) => connection.unsubscribeResource(uri, signal));
  }

  /** Every prompt the server lists (all pages; none if it has no prompts). Throws as {@link McpToolset.listResources}. */
  listPrompts(options: { readonly signal?: AbortSignal } = {}): Promise<Prompt[]> {
    return this.#ask('prompts/list', options.signal, (connection, signal) => connection.listPrompts(signal));
  }

  /**
   * Gets a prompt with its arguments (`prompts/get`); {@link mcpPromptMessages} turns it into kosong messages.
   * @throws {McpRequestError} if the server answers with an error (an unknown prompt, a missing argument).
   */
  getPrompt(name: string, args: Readonly<Record<string, string>> = {}, options: { readonly signal?: AbortSignal } = {}): Promise<GetPromptResult> {
    checkString('McpToolset.getPrompt: name', name);
    return this.#ask('prompts/get', options.signal, (connection, signal) => connection.getPrompt(name, { ...args }, signal));
  }

  /**
   * Completion of an argument of a prompt (`{ type: 'ref/prompt', name }`) or a resource template
   * (`{ type: 'ref/resource', uri: template }`): the server's suggestions for what was typed so far.
   * `context.arguments` gives the arguments already chosen.
   * @throws {McpRequestError} if the server answers with an error (or has no completions).
   */
  async complete(
    ref: CompleteRequest['params']['ref'],
    argument: { readonly name: string; readonly value: string },
    context?: { readonly arguments?: Readonly<Record<string, string>> },
    options: { readonly signal?: AbortSignal } = {},
  ): Promise<CompleteResult['completion']> {
    const params: CompleteRequest['params'] = {
      ref,
      argument: { ...argument },
      ...(context?.arguments === undefined ? {} : { context: { arguments: { ...context.arguments } } }),
    };
    const result = await this.#ask('completion/complete', options.signal, (connection, signal) => connection.complete(params, signal));
    return result.completion;
  }

  /** Runs a request of the resources and prompts API on the live connection (connecting if needed). */
  async #ask<T>(method: string, signal: AbortSignal | undefined, run: (connection: McpConnection, signal: AbortSignal | undefined) => Promise<T>): Promise<T> {
    const connection = await this.#ensureConnection(signal);
    try {
      return await run(connection, signal);
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (connection.lost) throw this.#error(`the connection broke during ${method}: ${describeError(error)}`, error);
      throw new McpRequestError(this.name, method, error);
    }
  }

  /** Subscribes again, in a new session, to the resources subscribed before; a failure is reported, not thrown. */
  async #resubscribe(connection: McpConnection): Promise<void> {
    await Promise.all(
      [...this.#subscriptions].map((uri) =>
        connection.subscribeResource(uri, this.#closeController.signal).catch((error: unknown) => {
          if (!connection.lost && !this.closed) this.#report(`subscribing again to ${uri} failed: ${describeError(error)}`, error);
        }),
      ),
    );
  }

  #debug(message: string): void {
    try {
      this.#options.onDebug?.(`MCP server "${this.name}": ${message}`);
    } catch {
      // the handler must not throw; nothing sensible to do if it does
    }
  }

  #error(message: string, cause?: unknown): McpConnectionError {
    return new McpConnectionError(this.name, message, cause === undefined ? undefined : { cause });
  }

  #report(message: string, cause: unknown): void {
    try {
      this.#options.onError?.(this.#error(message, cause));
    } catch {
      // the handler must not throw; nothing sensible to do if it does
    }
  }
}


function freezeRoots(roots: readonly McpRoot[]): readonly McpRoot[] {
  return Object.freeze(roots.map((root) => Object.freeze({ uri: root.uri, ...(root.name === undefined ? {} : { name: root.name }) })));
}

function checkString(what: string, value: unknown): void {
  if (typeof value !== 'string' || value === '') throw new TypeError(`${what} must be a non-empty string`);
}

/** Whether an HTTP request failed because the server does not know the session (it restarted). */
function isSessionExpired(error: unknown): boolean {
  return error instanceof StreamableHTTPError && error.code === 404;
}
