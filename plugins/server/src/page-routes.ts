import { checkKnownOptions, type KnownOptions } from '@kosong/core/kernel';

import type { Authenticate } from './auth.js';
import { savedChatMessages } from './page-messages.js';
import { isValidChatId, type ChatSessions } from './sessions.js';

/** Options of {@link createSavedChatHandler}: the chat handler's own `auth`, `sessions` and `path`. */
export interface SavedChatOptions {
  /** Who asks: the chat handler's `auth`. A tenant reads only its own chats. */
  readonly auth: Authenticate;
  /** The chat handler's `sessions` (the same object, so that a chat in flight is the one read). */
  readonly sessions: ChatSessions;
  /** The chat handler's `path` (default `/api/chat`); a saved chat is `GET <path>/<chat id>/messages`. */
  readonly path?: string;
  /** Told of a read that failed on the server (a 500). Default: one line on stderr. */
  readonly onError?: (error: unknown, request: Request) => void;
}

/** A Web handler that answers the requests of its route, and `undefined` for any other. */
export type RouteHandler = (request: Request) => Promise<Response | undefined>;

/**
 * `GET <path>/<chat id>/messages`: the stored conversation of one of the caller's chats, read-only,
 * as `{ "id", "messages" }` where `messages` are `UIMessage`s (see `savedChatMessages`): what the
 * page shows when it opens a saved chat. A chat never written is an empty list. Authenticated as
 * the chat route is (401 `unauthorized` without a valid key; the tenant is the key's), 400
 * `bad_chat_id` for an id `isValidChatId` refuses, 405 for another method, 500 `internal` (saying no
 * more) when the session cannot be read.
 */
export function createSavedChatHandler(options: SavedChatOptions): RouteHandler {
  checkKnownOptions('createSavedChatHandler', options, SAVED_CHAT_OPTIONS);
  if (typeof options.auth !== 'function') throw new TypeError('createSavedChatHandler: auth must be a function (the chat handler\'s auth)');
  if (typeof options.sessions?.open !== 'function') throw new TypeError('createSavedChatHandler: sessions must be the chat handler\'s ChatSessions');
  const base = chatPath(options.path, 'createSavedChatHandler');
  const onError = options.onError ?? ((error: unknown) => console.error(`[kosong/server] reading a saved chat failed: ${error instanceof Error ? error.message : String(error)}`));
  return async (request) => {
    const chatId = savedChatIdOf(new URL(request.url).pathname, base);
    if (chatId === undefined) return undefined;
    if (request.method !== 'GET' && request.method !== 'HEAD') return jsonError(405, 'method_not_allowed', `${base}/<chat id>/messages takes GET, not ${request.method}`, { allow: 'GET' });
    try {
      const tenant = await options.auth(request);
      if (typeof tenant !== 'string' || tenant === '') return jsonError(401, 'unauthorized', 'A valid API key is required (Authorization: Bearer <key>)', { 'www-authenticate': 'Bearer' });
      if (!isValidChatId(chatId)) return jsonError(400, 'bad_chat_id', 'The chat id must be 1 to 128 letters, digits, "_", "-" or "." (not first)');
      // a chat that does not exist is read as empty without being made (guessed ids cost nothing)
      const { sessions } = options;
      const context = sessions.peek === undefined ? await sessions.open(tenant, chatId) : await sessions.peek(tenant, chatId);
      const body = JSON.stringify({ id: chatId, messages: context === undefined ? [] : savedChatMessages(chatId, context.history, context.pendingStep) });
      return new Response(body, { status: 200, headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' } });
    } catch (error) {
      try {
        onError(error, request);
      } catch {
        // a report; the response is the same
      }
      return jsonError(500, 'internal', 'The request failed on the server');
    }
  };
}

/** The chat route of an option: a path of this origin, without a trailing slash. */
export function chatPath(path: string | undefined, owner: string): string {
  const base = (path ?? '/api/chat').replace(/\/+$/, '');
  if (!/^\/(?!\/)[A-Za-z0-9._~!$&'()*+,;=:@%/-]*$/.test(base) || base === '') throw new TypeError(`${owner}: path must be a path of this origin starting with "/", got ${JSON.stringify(path)}`);
  return base;
}

/** The chat id of `<base>/<id>/messages` (decoded), or `undefined` for another path. */
function savedChatIdOf(pathname: string, base: string): string | undefined {
  if (!pathname.startsWith(`${base}/`)) return undefined;
  const match = /^([^/]+)\/messages\/?$/.exec(pathname.slice(base.length + 1));
  if (!match) return undefined;
  try {
    return decodeURIComponent(match[1]!);
  } catch {
    return match[1]!; // not a valid chat id: refused as such
  }
}

function jsonError(status: number, code: string, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ error: { code, message } }), { status, headers: { 'content-type': 'application/json; charset=utf-8', ...headers } });
}

const SAVED_CHAT_OPTIONS: KnownOptions<SavedChatOptions> = { auth: true, sessions: true, path: true, onError: true };
