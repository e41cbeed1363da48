/**
 * What the kosong MCP client offers servers (roots, sampling, elicitation) and the notifications it
 * passes on (progress, log messages, resource updates).
 *
 * @module
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
  ResourceUpdatedNotificationSchema,
  type ClientCapabilities,
  type ElicitRequest,
  type ElicitResult,
  type LoggingLevel,
} from '@modelcontextprotocol/sdk/types.js';
import { answerSampling, type McpSamplingOptions } from './mcp-sampling.js';

/** A root the client gives servers (`roots/list`): a directory or other place they may work in. */
export interface McpRoot {
  /** A `file://` URI (the spec's only kind today). */
  readonly uri: string;
  readonly name?: string;
}

/** An elicitation request (`elicitation/create`, form mode): the server asks the user for input. */
export interface McpElicitationRequest {
  /** The server's name. */
  readonly server: string;
  /** As the server sent it: `message` and the `requestedSchema` of the answer. */
  readonly params: ElicitRequest['params'];
  /** Aborts when the server cancels the request or the connection ends. */
  readonly signal: AbortSignal;
}

/**
 * Answers an elicitation: `{ action: 'accept', content }`, `{ action: 'decline' }` or
 * `{ action: 'cancel' }`. The SDK checks accepted content against the requested schema. A throw is
 * reported to `onError` and the server gets an MCP error (-32603).
 */
export type McpElicitationHandler = (request: McpElicitationRequest) => ElicitResult | Promise<ElicitResult>;

/** A progress notification of a tool call (`notifications/progress`). */
export interface McpProgressEvent {
  readonly type: 'mcp.progress';
  readonly server: string;
  /** The tool's name as the model sees it. */
  readonly toolName: string;
  readonly toolCallId: string;
  readonly progress: number;
  readonly total?: number;
  readonly message?: string;
}

/** A log message of the server (`notifications/message`). */
export interface McpLogEvent {
  readonly type: 'mcp.log';
  readonly server: string;
  readonly level: LoggingLevel;
  readonly logger?: string;
  readonly data: unknown;
}

/** A subscribed resource changed (`notifications/resources/updated`): read it again. */
export interface McpResourceUpdatedEvent {
  readonly type: 'mcp.resource_updated';
  readonly server: string;
  readonly uri: string;
}

/** The client side of a connection, as the toolset configures it. @internal */
export interface McpClientFeatures {
  readonly server: string;
  /** The current roots (read on each `roots/list`); `undefined`: roots are not offered. */
  readonly roots: (() => readonly McpRoot[]) | undefined;
  readonly sampling: McpSamplingOptions | undefined;
  readonly elicitation: McpElicitationHandler | undefined;
  readonly onLog: ((event: McpLogEvent) => void) | undefined;
  readonly onResourceUpdated: ((event: McpResourceUpdatedEvent) => void) | undefined;
  /** Told about a callback that threw. */
  readonly onCallbackError: (what: string, error: unknown) => void;
}

/**
 * The capabilities announced: roots (with `listChanged`) when roots are given, sampling when a
 * provider is given, form elicitation always (without a handler every request is declined).
 * @internal
 */
export function clientCapabilities(features: McpClientFeatures): ClientCapabilities {
  return {
    ...(features.roots ? { roots: { listChanged: true } } : {}),
    ...(features.sampling ? { sampling: {} } : {}),
    elicitation: { form: {} },
  };
}

/** Registers the request and notification handlers on a client (before it connects). @internal */
export function installClientFeatures(client: Client, features: McpClientFeatures): void {
  const { roots, sampling, elicitation, server } = features;
  if (roots) client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: roots().map((root) => ({ ...root })) }));
  if (sampling) client.setRequestHandler(CreateMessageRequestSchema, (request, extra) => answerSampling(server, sampling, request.params, extra.signal));
  client.setRequestHandler(ElicitRequestSchema, async (request, extra): Promise<ElicitResult> => {
    if (!elicitation) return { action: 'decline' };
    try {
      return await elicitation({ server, params: request.params, signal: extra.signal });
    } catch (error) {
      if (extra.signal.aborted) throw error;
      features.onCallbackError('elicitation', error);
      throw new McpError(-32603, `the client's elicitation handler failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    const { level, logger, data } = notification.params;
    deliver(features, 'onLog', () => features.onLog?.({ type: 'mcp.log', server, level, ...(logger === undefined ? {} : { logger }), data }));
  });
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
    deliver(features, 'onResourceUpdated', () => features.onResourceUpdated?.({ type: 'mcp.resource_updated', server, uri: notification.params.uri }));
  });
}

/** Runs a user callback; a throw is reported, never passed to the SDK. @internal */
export function deliver(features: Pick<McpClientFeatures, 'onCallbackError'>, what: string, run: () => void): void {
  try {
    run();
  } catch (error) {
    features.onCallbackError(what, error);
  }
}
