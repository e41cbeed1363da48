import { recordRequest, ReplyPacer, type RecordedRequest as BaseRecordedRequest } from '@kosong/core/testing';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { errorBody, textReply } from './responses.js';

/** One request the server received, and the model named in its path. */
export interface RecordedRequest extends BaseRecordedRequest {
  /** The model named in the path (`…/models/<model>:…`), if any. */
  readonly model: string | undefined;
}

/** A streamed reply: each event as one server-sent event, `data: <json>` and a blank line (CRLF, as Gemini sends them). */
export interface StreamReply {
  readonly type: 'stream';
  /** Objects are sent as JSON, strings as they are (malformed data, say). */
  readonly events: readonly (object | string)[];
  /** Extra response headers. */
  readonly headers?: Readonly<Record<string, string>>;
  /** The content type; default `text/event-stream`. */
  readonly contentType?: string;
  /** Wait before the response headers, in ms. */
  readonly headerDelayMs?: number;
  /** Wait before each event, in ms. Without it, events are written in large batches (fast). */
  readonly eventDelayMs?: number;
  /** Text written after the events, as it is (a torn event, say). */
  readonly trailer?: string;
  /**
   * What happens after the events: `end` (default) ends the response, `destroy` cuts the connection
   * without ending it (a disconnect mid-stream), `hang` keeps it open and silent until the client leaves.
   */
  readonly then?: 'end' | 'destroy' | 'hang';
}

/** A whole reply at once: a JSON error, an HTML page, … */
export interface BodyReply {
  readonly type: 'body';
  /** Default 200. */
  readonly status?: number;
  /** Objects are sent as JSON, strings as they are. */
  readonly body: object | string;
  /** Default `application/json` for an object body, `text/html` for a string. */
  readonly contentType?: string;
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
export type ServerReply = StreamReply | BodyReply | HangReply | CustomReply;

/** Options of {@link GeminiServer.start}. */
export interface GeminiServerOptions {
  /** The reply when no queued reply is left; default: a short text stream ({@link textReply}). */
  readonly defaultReply?: ServerReply;
}

/**
 * A local HTTP server speaking the Gemini REST streaming format, for tests and benchmarks: it
 * listens on 127.0.0.1 on an ephemeral port, records every request (headers, exact body), and
 * answers `POST …:streamGenerateContent` (Gemini API and Vertex AI paths alike) with the replies
 * queued with {@link GeminiServer.reply}, in order, then the default reply. Other requests get a
 * 404 in Google's error format.
 *
 * @example
 * const server = await GeminiServer.start();
 * server.reply(textReply(['Hello', ' world']));
 * const provider = new GeminiChatProvider({ baseURL: server.url, apiKey: 'test-key', model: 'gemini-2.5-flash' });
 * // … server.lastRequest.body is the request body
 * await server.close();
 */
export class GeminiServer {
  /** Every request received, in order. */
  readonly requests: RecordedRequest[] = [];
  readonly #queue: ServerReply[] = [];
  readonly #pacer = new ReplyPacer();
  #closed = false;

  private constructor(
    private readonly server: Server,
    private readonly defaultReply: ServerReply,
  ) {}

  /** Starts a server on 127.0.0.1 (ephemeral port). */
  static async start(options: GeminiServerOptions = {}): Promise<GeminiServer> {
    const server = createServer();
    const instance = new GeminiServer(server, options.defaultReply ?? textReply(['Hello', ' from the test server.']));
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

  /** `http://127.0.0.1:<port>`: the base URL for clients (the SDK adds the API version). */
  get url(): string {
    const { port } = this.server.address() as AddressInfo;
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
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    try {
      await this.#answer(request, response);
    } catch {
      response.destroy(); // the client went away mid-exchange, or a custom reply failed
    }
  }

  async #answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const base = await recordRequest(request, response);
    const path = base.path;
    const route = path.split('?')[0]!;
    const recorded: RecordedRequest = { ...base, model: /\/models\/([^/:]+):/.exec(route)?.[1] };
    this.requests.push(recorded);
    if (request.method !== 'POST' || !route.endsWith(':streamGenerateContent')) {
      writeBody(response, 404, errorBody(404, 'NOT_FOUND', `no route for ${request.method} ${path}`));
      return;
    }
    const reply = this.#queue.shift() ?? this.defaultReply;
    if (typeof reply === 'function') await reply(recorded, response);
    else if (reply.type === 'body') await this.#body(reply, response);
    else if (reply.type === 'stream') await this.#pacer.stream(response, { 'content-type': reply.contentType ?? 'text/event-stream', ...reply.headers }, sseEvents(reply), reply);
  }

  async #body(reply: BodyReply, response: ServerResponse): Promise<void> {
    if (reply.delayMs !== undefined && !(await this.#pacer.sleep(reply.delayMs, response))) return;
    writeBody(response, reply.status ?? 200, reply.body, reply.contentType, reply.headers);
  }

}

function writeBody(response: ServerResponse, status: number, body: object | string, contentType?: string, headers: Readonly<Record<string, string>> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  response.writeHead(status, { 'content-type': contentType ?? (typeof body === 'string' ? 'text/html' : 'application/json; charset=UTF-8'), ...headers });
  response.end(text);
}

/** The reply's events on the wire: each as one `data:` line (objects as JSON), then the trailer if any. */
function* sseEvents(reply: StreamReply): Generator<string> {
  for (const event of reply.events) yield `data: ${typeof event === 'string' ? event : JSON.stringify(event)}\r\n\r\n`;
  if (reply.trailer !== undefined) yield reply.trailer;
}

/** Writes, waiting for the socket to drain when it is full; resolves `false` when the connection closed. */
export { writeChunk as write } from '@kosong/core/testing';
