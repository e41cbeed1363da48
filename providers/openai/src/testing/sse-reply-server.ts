import { recordRequest, ReplyPacer, type RecordedRequest } from '@kosong/core/testing';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type { RecordedRequest } from '@kosong/core/testing';

/** A streamed (SSE) reply: one event per chunk, in the format of the server's API. */
export interface StreamReply {
  readonly type: 'stream';
  /** Each chunk is sent as one event: objects as JSON, strings as they are (e.g. malformed data) in a `data:` line. */
  readonly chunks: readonly (object | string)[];
  /** Extra response headers (e.g. `x-trace-id`). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Wait before the response headers, in ms. */
  readonly headerDelayMs?: number;
  /** Wait before each chunk, in ms. Without it, chunks are written in large batches (fast). */
  readonly chunkDelayMs?: number;
  /** Chat Completions: whether `data: [DONE]` follows the chunks; default true. */
  readonly done?: boolean;
  /**
   * What happens after the chunks: `end` (default) ends the response, `destroy` cuts the connection
   * without ending it (a disconnect mid-stream), `hang` keeps it open and silent until the client leaves.
   */
  readonly then?: 'end' | 'destroy' | 'hang';
}

/** A plain JSON reply, e.g. an error status. */
export interface JsonReply {
  readonly type: 'json';
  /** Default 200. */
  readonly status?: number;
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
export type ServerReply = StreamReply | JsonReply | HangReply | CustomReply;

/** How a server of one API answers: its route, and how a stream reply becomes SSE events. */
export interface StreamFormat {
  /** The end of the path the server answers with its replies, e.g. `/chat/completions`. */
  readonly route: string;
  /** The SSE events (each a whole `…\n\n` block) of a stream reply. */
  events(reply: StreamReply): string[];
}

/**
 * A local HTTP server that plays queued replies in the SSE format of one API (a {@link StreamFormat}),
 * for tests and benchmarks: it listens on 127.0.0.1 on an ephemeral port, records every request
 * (headers, exact body), and answers `POST …<route>` with the replies queued with
 * {@link SSEReplyServer.reply}, in order (then the default reply). Other paths get a 404 JSON error.
 * `ChatCompletionsServer` and `ResponsesServer` are its two APIs.
 */
export class SSEReplyServer {
  /** Every request received, in order. */
  readonly requests: RecordedRequest[] = [];
  readonly #queue: ServerReply[] = [];
  readonly #pacer = new ReplyPacer();
  #closed = false;

  private readonly server: Server = createServer();

  protected constructor(
    private readonly format: StreamFormat,
    private readonly defaultReply: ServerReply,
  ) {
    this.server.on('request', (request: IncomingMessage, response: ServerResponse) => void this.#handle(request, response));
  }

  /** Starts `instance` listening on 127.0.0.1 (ephemeral port); what a subclass's `start` returns. */
  protected static async listen<T extends SSEReplyServer>(instance: T): Promise<T> {
    const server = instance.server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    return instance;
  }

  /** `http://127.0.0.1:<port>`. */
  get url(): string {
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  /** The base URL for clients: {@link SSEReplyServer.url} + `/v1`. */
  get baseURL(): string {
    return `${this.url}/v1`;
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
    const recorded = await recordRequest(request, response);
    this.requests.push(recorded);
    if (request.method !== 'POST' || !(request.url ?? '').split('?')[0]!.endsWith(this.format.route)) {
      writeJSON(response, 404, { error: { message: `no route for ${request.method} ${request.url}`, type: 'not_found' } });
      return;
    }
    const reply = this.#queue.shift() ?? this.defaultReply;
    if (typeof reply === 'function') await reply(recorded, response);
    else if (reply.type === 'json') await this.#json(reply, response);
    else if (reply.type === 'stream') await this.#pacer.stream(response, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...reply.headers }, this.format.events(reply), { ...reply, eventDelayMs: reply.chunkDelayMs });
  }

  async #json(reply: JsonReply, response: ServerResponse): Promise<void> {
    if (reply.delayMs !== undefined && !(await this.#pacer.sleep(reply.delayMs, response))) return;
    writeJSON(response, reply.status ?? 200, reply.body, reply.headers);
  }
}

function writeJSON(response: ServerResponse, status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
}

