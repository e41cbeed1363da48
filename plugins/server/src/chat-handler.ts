import { randomUUID } from 'node:crypto';

import type { Agent, Kernel, KernelAgentOptions } from '@kosong/core';
import { checkKnownOptions, type KnownOptions } from '@kosong/core/kernel';

import type { Authenticate } from './auth.js';
import { ChatRequestError, parseChatRequest } from './chat-request.js';
import { isValidChatId, memorySessions, type ChatSessions } from './sessions.js';
import { TurnStream } from './turn-stream.js';
import { SSE_DONE, sseFrame, UiChunkWriter } from './ui-chunks.js';

/** The headers of a UI message stream response (those of the AI SDK's `createUIMessageStreamResponse`). */
export const UI_MESSAGE_STREAM_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-vercel-ai-ui-message-stream': 'v1',
  'x-accel-buffering': 'no',
});

/** The largest request body by default: 1 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** How much of a turn's stream is kept for resuming, by default: 4 MiB. */
export const DEFAULT_MAX_TURN_BUFFER_BYTES = 4 * 1024 * 1024;

/** Options of {@link createChatHandler}. */
export interface ChatHandlerOptions {
  /** The kernel whose tenants' agents answer. */
  readonly kernel: Kernel;
  /** Who sends a request: the tenant it runs as (see `apiKeyAuth`). A request never picks its tenant itself. */
  readonly auth: Authenticate;
  /** Where the chats' conversations are kept (default: `memorySessions()`). */
  readonly sessions?: ChatSessions;
  /**
   * The agent of every chat (`kernel.agent()`'s options but the tenant, which is the request's, and
   * the context, which is the chat's): its system prompt, provider, `maxSteps`, `timeouts`, …
   * Default: an empty system prompt.
   */
  readonly agent?: Omit<KernelAgentOptions, 'tenant' | 'context'>;
  /** The path of the chat route (default `/api/chat`); resuming is `<path>/<chat id>/stream`. */
  readonly path?: string;
  /** The largest request body, in bytes (default {@link DEFAULT_MAX_BODY_BYTES}); a larger one is a 413. */
  readonly maxBodyBytes?: number;
  /**
   * How many bytes of a turn's stream are kept so that it can be resumed from its start (default
   * {@link DEFAULT_MAX_TURN_BUFFER_BYTES}). A turn that streams more cannot be resumed any more
   * (a resume gets 204); the response that runs it goes on.
   */
  readonly maxTurnBufferBytes?: number;
  /**
   * The `errorText` of the `error` chunk of a turn that failed. Default: the error's message. Give
   * one that says less when errors may carry what a client should not see.
   */
  readonly errorText?: (error: unknown) => string;
  /**
   * Told of a request that failed on the server (a 500: an `authenticate` that threw, a session
   * that could not be opened, …), whose response says only that it failed. Default: one line on stderr.
   */
  readonly onError?: (error: unknown, request: Request) => void;
}

/**
 * The chat endpoint as a Web `Request` → `Response` function, for any server that speaks the Fetch
 * API (Fastify through `createServer`, Hono, Next.js route handlers, `Deno.serve`, …).
 */
export interface ChatHandler {
  (request: Request): Promise<Response>;
  /** Aborts every running turn (their streams end with an `abort` chunk), then closes the sessions. */
  close(): Promise<void>;
  /** Resolves when no turn runs (the turns running now have ended, their way). */
  idle(): Promise<void>;
}

/** A chat of a tenant while the handler runs: its agent, and the turn in flight. */
interface Chat {
  readonly agent: Agent;
  turn: { readonly stream: TurnStream; readonly done: Promise<void> } | undefined;
}

/**
 * The chat endpoint of the AI SDK's `useChat` (`DefaultChatTransport`), for the agents of a kernel:
 *
 * - `POST <path>`: a `useChat` request (`id`, `messages`, `trigger`, `messageId`); runs a turn of the
 *   authenticated tenant's agent on the chat `id` with the new user message, and streams it as the
 *   UI message stream v1 (server-sent events of `UIMessageChunk`s, then `data: [DONE]`).
 * - `GET <path>/<id>/stream`: the turn in flight of that chat, from its first chunk; 204 when none.
 *
 * Errors are JSON (`{ "error": { "code", "message" } }`): 401 without a known key, 400 for a body
 * that is not JSON or not a `useChat` request and for a bad chat id, 404 for another path, 405 for
 * another method, 409 when the chat has a turn running, 413 for a body over `maxBodyBytes`, 500
 * (saying no more; `onError` is told why) when the server failed, 503 once closed.
 *
 * The turn runs to its end whatever happens to the response: a client that goes away leaves it
 * running, its chunks resumable. Only {@link ChatHandler.close} aborts it.
 */
export function createChatHandler(options: ChatHandlerOptions): ChatHandler {
  checkHandlerOptions(options);
  const { kernel, auth } = options;
  const sessions = options.sessions ?? memorySessions();
  const base = (options.path ?? '/api/chat').replace(/\/+$/, '');
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const maxTurnBufferBytes = options.maxTurnBufferBytes ?? DEFAULT_MAX_TURN_BUFFER_BYTES;
  const errorText = options.errorText ?? defaultErrorText;
  const onError = options.onError ?? ((error: unknown, request: Request) => console.error(`[kosong/server] ${request.method} ${new URL(request.url).pathname} failed: ${defaultErrorText(error)}`));
  const agentOptions = options.agent ?? { systemPrompt: '' };
  const chats = new Map<string, Promise<Chat>>();
  const running = new Set<Promise<void>>();
  const closing = new AbortController();

  const chatOf = (tenant: string, chatId: string): Promise<Chat> => {
    const key = `${tenant}\u0000${chatId}`;
    let chat = chats.get(key);
    if (chat === undefined) {
      chat = sessions.open(tenant, chatId).then((context) => ({ agent: kernel.agent({ ...agentOptions, tenant, context }), turn: undefined }));
      chats.set(key, chat);
      chat.catch(() => chats.delete(key));
    }
    return chat;
  };

  const findChat = async (tenant: string, chatId: string): Promise<Chat | undefined> => chats.get(`${tenant}\u0000${chatId}`)?.catch(() => undefined);

  const startTurn = (chat: Chat, message: Parameters<Agent['run']>[0]): TurnStream => {
    const stream = new TurnStream(maxTurnBufferBytes);
    const writer = new UiChunkWriter((chunk) => stream.write(sseFrame(chunk)));
    writer.start(randomUUID());
    const done = (async () => {
      try {
        const result = await chat.agent.run(message, { signal: closing.signal, onEvent: (event) => writer.event(event) });
        writer.finish(result);
      } catch (error) {
        if (closing.signal.aborted) writer.abort('The server is shutting down');
        else writer.error(errorText(error));
      } finally {
        stream.write(SSE_DONE);
        stream.end();
        chat.turn = undefined;
      }
    })();
    chat.turn = { stream, done };
    running.add(done);
    void done.finally(() => running.delete(done));
    return stream;
  };

  const post = async (request: Request, tenant: string): Promise<Response> => {
    const text = await readBody(request, maxBodyBytes);
    if (text === TOO_LARGE) return jsonError(413, 'body_too_large', `The request body is larger than ${maxBodyBytes} bytes`);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (error) {
      return jsonError(400, 'malformed_json', `The request body is not JSON: ${(error as Error).message}`);
    }
    let chatRequest;
    try {
      chatRequest = parseChatRequest(body);
    } catch (error) {
      if (error instanceof ChatRequestError) return jsonError(400, 'bad_request', `The request body is not a useChat request: ${error.message}`);
      throw error;
    }
    const chat = await chatOf(tenant, chatRequest.chatId);
    if (chat.turn !== undefined) return jsonError(409, 'turn_running', 'This chat has a turn running: resume it (GET …/stream) or wait for its end');
    const stream = startTurn(chat, chatRequest.message);
    return new Response(stream.reader(), { status: 200, headers: UI_MESSAGE_STREAM_HEADERS });
  };

  const resume = async (tenant: string, chatId: string): Promise<Response> => {
    const turn = (await findChat(tenant, chatId))?.turn;
    if (turn === undefined || turn.stream.done || !turn.stream.replayable) return new Response(null, { status: 204 });
    return new Response(turn.stream.reader(), { status: 200, headers: UI_MESSAGE_STREAM_HEADERS });
  };

  const handle = async (request: Request): Promise<Response> => {
    let pathname: string;
    try {
      pathname = new URL(request.url).pathname;
    } catch {
      return jsonError(400, 'bad_url', 'The request URL cannot be read');
    }
    const route = routeOf(pathname, base);
    if (route === undefined) return jsonError(404, 'not_found', `No route ${pathname}: POST ${base}, GET ${base}/<chat id>/stream`);
    const method = route.kind === 'chat' ? 'POST' : 'GET';
    if (request.method !== method) return jsonError(405, 'method_not_allowed', `${pathname} takes ${method}, not ${request.method}`, { allow: method });
    if (closing.signal.aborted) return jsonError(503, 'closed', 'The server is shutting down');
    try {
      const tenant = await auth(request);
      if (typeof tenant !== 'string' || tenant === '') return jsonError(401, 'unauthorized', 'A valid API key is required (Authorization: Bearer <key>)', { 'www-authenticate': 'Bearer' });
      if (route.kind === 'chat') return await post(request, tenant);
      if (!isValidChatId(route.chatId)) return jsonError(400, 'bad_chat_id', 'The chat id must be 1 to 128 letters, digits, "_", "-" or "." (not first)');
      return await resume(tenant, route.chatId);
    } catch (error) {
      try {
        onError(error, request);
      } catch {
        // a report; the response is the same
      }
      return jsonError(500, 'internal', 'The request failed on the server');
    }
  };

  const idle = async (): Promise<void> => {
    while (running.size > 0) await Promise.all([...running]);
  };

  return Object.assign(handle, {
    idle,
    async close(): Promise<void> {
      closing.abort(new Error('The chat handler was closed'));
      await idle();
      await sessions.close();
    },
  });
}

type Route = { readonly kind: 'chat' } | { readonly kind: 'stream'; readonly chatId: string };

/** The route of a path: the chat route, a chat's stream (its id decoded), or none. */
function routeOf(pathname: string, base: string): Route | undefined {
  if (pathname === base || pathname === `${base}/`) return { kind: 'chat' };
  if (!pathname.startsWith(`${base}/`)) return undefined;
  const rest = pathname.slice(base.length + 1);
  const match = /^([^/]+)\/stream\/?$/.exec(rest);
  if (!match) return undefined;
  let chatId: string;
  try {
    chatId = decodeURIComponent(match[1]!);
  } catch {
    chatId = match[1]!; // not a valid chat id: refused as such
  }
  return { kind: 'stream', chatId };
}

const TOO_LARGE = Symbol('too large');

/** The body as text, or {@link TOO_LARGE} as soon as it passes `limit` bytes (the rest is not read). */
async function readBody(request: Request, limit: number): Promise<string | typeof TOO_LARGE> {
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > limit) {
    await request.body?.cancel().catch(() => undefined);
    return TOO_LARGE;
  }
  if (request.body === null) return '';
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      return TOO_LARGE;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** A JSON error response: `{ "error": { "code", "message" } }`. */
function jsonError(status: number, code: string, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ error: { code, message } }), { status, headers: { 'content-type': 'application/json; charset=utf-8', ...headers } });
}

function defaultErrorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

const HANDLER_OPTIONS: KnownOptions<ChatHandlerOptions> = {
  kernel: true,
  auth: true,
  sessions: true,
  agent: true,
  path: true,
  maxBodyBytes: true,
  maxTurnBufferBytes: true,
  errorText: true,
  onError: true,
};

/** Refuses what the handler would not honour: an unknown option, no auth, a size that is no positive integer. */
function checkHandlerOptions(options: ChatHandlerOptions): void {
  checkKnownOptions('createChatHandler', options, HANDLER_OPTIONS);
  if (typeof options.auth !== 'function') throw new TypeError('createChatHandler: auth must be a function (apiKeyAuth(...) or your own authenticate)');
  for (const name of ['maxBodyBytes', 'maxTurnBufferBytes'] as const) {
    const value = options[name];
    if (value !== undefined && (!Number.isSafeInteger(value) || value <= 0)) throw new TypeError(`createChatHandler: ${name} must be a positive integer of bytes, got ${String(value)}`);
  }
}
