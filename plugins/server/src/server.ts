import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';

import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';

import { createChatHandler, type ChatHandler, type ChatHandlerOptions } from './chat-handler.js';
import { registerPage } from './page.js';
import { memorySessions } from './sessions.js';

/** Options of {@link createServer}: the handler's, Fastify's own, and the web page's. */
export interface ServerOptions extends ChatHandlerOptions {
  /** Options of the Fastify instance (`logger`, `trustProxy`, …). */
  readonly fastify?: FastifyServerOptions;
  /**
   * Serve the web page too (`registerPage`): `GET /` and its files, and saved chats read-only
   * (`GET <path>/<id>/messages`) with the handler's own `auth` and `sessions`. Default: no page.
   */
  readonly page?: boolean;
}

/**
 * A Fastify 5 server that serves the chat handler ({@link createChatHandler}) on every path: the
 * handler routes (and answers 404 and 405) itself. Request bodies are not parsed by Fastify: the
 * handler reads them, up to its `maxBodyBytes`. Closing the server (`await app.close()`) closes the
 * handler: running turns are aborted, the sessions closed. With `page: true`, the web page is
 * served beside it (its routes are more specific than the handler's catch-all).
 *
 * @example
 * const app = createServer({ kernel, auth: apiKeyAuth([{ sha256: hashApiKey(key), tenant: 'acme' }]) });
 * await app.listen({ port: 3000, host: '127.0.0.1' });
 */
export function createServer(options: ServerOptions): FastifyInstance {
  const { fastify: fastifyOptions, page, ...handlerOptions } = options;
  if (page !== undefined && typeof page !== 'boolean') throw new TypeError(`createServer: page must be a boolean, got ${typeof page}`);
  const sessions = handlerOptions.sessions ?? memorySessions(); // one object for the chats and the page's saved chats
  const handler = createChatHandler({ ...handlerOptions, sessions });
  const app = mountChatHandler(Fastify(fastifyOptions), handler);
  if (page === true) registerPage(app, { savedChats: { auth: handlerOptions.auth, sessions }, ...(handlerOptions.path === undefined ? {} : { path: handlerOptions.path }) });
  return app;
}

/**
 * Mounts a chat handler on a Fastify instance, on every path and method (a plugin of its own,
 * whose content-type parsers leave bodies unread), and closes it with the instance.
 */
export function mountChatHandler(app: FastifyInstance, handler: ChatHandler): FastifyInstance {
  const responses = new Set<Promise<void>>();
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
    scope.route({
      method: ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'],
      url: '/*',
      handler: (request, reply) => {
        const sent = new Promise<void>((resolve) => reply.raw.once('close', resolve));
        responses.add(sent);
        void sent.then(() => responses.delete(sent));
        return serve(handler, request, reply);
      },
    });
  });
  // Before the server waits for its connections: the running turns are aborted, and once their
  // streams are sent, the connections are idle, and Fastify closes them (not the clients' keep-alive).
  app.addHook('preClose', async () => {
    await handler.close();
    await Promise.all([...responses]);
  });
  return app;
}

/** Runs the handler on a Fastify request: the Node request as a Web `Request`, the `Response` sent back as it streams. */
async function serve(handler: ChatHandler, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const raw = request.raw;
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  const hasBody = request.method !== 'GET' && request.method !== 'HEAD';
  const url = `http://${headers.get('host') ?? 'localhost'}${raw.url ?? '/'}`;
  const webRequest = new Request(url, {
    method: request.method,
    headers,
    ...(hasBody ? { body: bodyStream(raw), duplex: 'half' } : {}),
  } as RequestInit);
  const response = await handler(webRequest);
  reply.status(response.status);
  response.headers.forEach((value, name) => void reply.header(name, value));
  if (response.body === null) return reply.send();
  return reply.send(Readable.fromWeb(response.body as NodeReadableStream<Uint8Array>));
}

/**
 * A Node request body as a Web stream that pulls (the request is paused while the stream is full).
 * Cancelled (a body over the limit), the rest of the body is read and dropped, so that the
 * response still reaches the client. (`Readable.toWeb` throws an uncaught error on Node 20 when
 * data arrives after a cancel.)
 */
function bodyStream(raw: IncomingMessage): ReadableStream<Uint8Array> {
  let cancelled = false;
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        raw.on('data', (chunk: Buffer) => {
          if (cancelled) return;
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          if ((controller.desiredSize ?? 0) <= 0) raw.pause();
        });
        raw.once('end', () => void (cancelled || controller.close()));
        raw.once('error', (error) => void (cancelled || controller.error(error)));
        raw.pause();
      },
      pull() {
        raw.resume();
      },
      cancel() {
        cancelled = true;
        raw.resume();
      },
    },
    { highWaterMark: 65536, size: (chunk) => chunk.byteLength },
  );
}
