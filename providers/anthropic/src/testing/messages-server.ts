import { recordRequest, ReplyPacer, type RecordedRequest } from '@kosong/core/testing';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { textReply, type SseEvent } from './events.js';

export type { RecordedRequest } from '@kosong/core/testing';

/** A streamed reply: server-sent events, `event: <name>` + `data: <json>` each. */
export interface EventStreamReply {
  readonly type: 'stream';
  /** The events; a string is written as it is (malformed or partial data, comments …). */
  readonly events: readonly (SseEvent | string)[];
  /** Extra response headers (e.g. `request-id`). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Wait before the response headers, in ms. */
  readonly headerDelayMs?: number;
  /** Wait before each event, in ms. Without it, events are written in large batches (fast). */
  readonly eventDelayMs?: number;
  /**
   * What happens after the events: `end` (default) ends the response, `destroy` cuts the connection
   * without ending it (a disconnect mid-stream), `hang` keeps it open and silent until the client leaves.
   */
  readonly then?: 'end' | 'destroy' | 'hang';
}

/** A complete reply with any status, content type and body (an error status, an HTML page …). */
export interface BodyReply {
  readonly type: 'body';
  /** Default 200. */
  readonly status?: number;
  /** An object is sent as JSON (`application/json`), a string as it is (`text/plain` unless a header says otherwise). */
  readonly body: unknown;
  readonly headers?: Readonly<Record<string, string>>;
  /** Wait before responding, in ms. */
  readonly delayMs?: number;
}

/** No reply at all: the request hangs until the client gives up. */
export interface HangReply {
  readonly type: 'hang';
}

/** Writes the reply itself. */
export type CustomReply = (request: RecordedRequest, response: ServerResponse) => void | Promise<void>;

/** What the server answers to one request. */
export type ServerReply = EventStreamReply | BodyReply | HangReply | CustomReply;

/** Options of {@link MessagesServer.start}. */
export interface MessagesServerOptions {
  /** The reply when no queued reply is left; default: a short text stream ({@link textReply}). */
  readonly defaultReply?: ServerReply;
}

/** Bytes of events gathered before one write, when events are not delayed. */
/**
 * A local HTTP server speaking the Anthropic Messages API's streaming format, for tests and
 * benchmarks: it listens on 127.0.0.1 on an ephemeral port, records every request (headers, exact
 * body), and answers `POST …/v1/messages` with the replies queued with {@link MessagesServer.reply},
 * in order (then the default reply). Other routes get a 404 in the API's error format.
 *
 * @example
 * const server = await MessagesServer.start();
 * server.reply(textReply(['Hello', ' world']));
 * const provider = new AnthropicChatProvider({ baseURL: server.url, apiKey: 'sk-ant-test', model: 'claude-sonnet-4-6' });
 * // … server.lastRequest.body is the request body
 * await server.close();
 */
export class MessagesServer {
  /** Every request received, in order. */
  readonly requests: RecordedRequest[] = [];
  readonly #server: Server;
  readonly #defaultReply: ServerReply;
  readonly #queue: ServerReply[] = [];
  readonly #pacer = new ReplyPacer();
  #closed = false;

  private constructor(server: Server, defaultReply: ServerReply) {
    this.#server = server;
    this.#defaultReply = defaultReply;
  }

  /** Starts a server on 127.0.0.1 (ephemeral port). */
  static async start(options: MessagesServerOptions = {}): Promise<MessagesServer> {
    const server = createServer();
    const instance = new MessagesServer(server, options.defaultReply ?? textReply(['Hello', ' from the test server.']));
    server.on('request', (request: IncomingMessage, response: ServerResponse) => void instance.#handle(request, response));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    return instance;
  }

  /** `http://127.0.0.1:<port>`: the base URL for clients (the SDK adds `/v1/messages`). */
  get url(): string {
    const { port } = this.#server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  /** The last request received. @throws if there was none. */
  get lastRequest(): RecordedRequest {
    const last = this.requests.at(-1);
    if (last === undefined) throw new Error('the server has received no request');
    return last;
  }

  /** Queues replies for the next requests, one each, in order. */
  reply(...replies: ServerReply[]): this {
    this.#queue.push(...replies);
    return this;
  }

  /** How many queued replies are still unused. */
  get pendingReplies(): number {
    return this.#queue.length;
  }

  /** Closes every connection and stops the server. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#pacer.close();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    try {
      const recorded = await recordRequest(request, response);
      this.requests.push(recorded);
      if (request.method !== 'POST' || !recorded.path.split('?')[0]!.endsWith('/v1/messages')) {
        sendBody(response, { type: 'body', status: 404, body: apiError('not_found_error', `no route for ${request.method} ${request.url}`) });
        return;
      }
      const reply = this.#queue.shift() ?? this.#defaultReply;
      if (typeof reply === 'function') await reply(recorded, response);
      else if (reply.type === 'body') {
        if (reply.delayMs === undefined || (await this.#pacer.sleep(reply.delayMs, response))) sendBody(response, reply);
      } else if (reply.type === 'stream') await this.#pacer.stream(response, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', ...reply.headers }, reply.events.map(encodeEvent), reply);
    } catch {
      response.destroy(); // the client went away mid-exchange, or a custom reply failed
    }
  }

}

/** The API's error body: `{type: 'error', error: {type, message}}`. */
export function apiError(type: string, message: string): object {
  return { type: 'error', error: { type, message } };
}

/** One event on the wire: `event: <name>\ndata: <json>\n\n`; a string as it is. */
export function encodeEvent(event: SseEvent | string): string {
  if (typeof event === 'string') return event;
  return `event: ${event.event}\ndata: ${typeof event.data === 'string' ? event.data : JSON.stringify(event.data)}\n\n`;
}

function sendBody(response: ServerResponse, reply: BodyReply): void {
  const text = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
  const type = typeof reply.body === 'string' ? 'text/plain; charset=utf-8' : 'application/json';
  response.writeHead(reply.status ?? 200, { 'content-type': type, ...reply.headers });
  response.end(text);
}

