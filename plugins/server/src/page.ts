import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { checkKnownOptions, type KnownOptions } from '@kosong/core/kernel';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

import type { Authenticate } from './auth.js';
import { chatPath, createSavedChatHandler, type RouteHandler } from './page-routes.js';
import type { ChatSessions } from './sessions.js';

/** Where `npm run build` (`scripts/bundle-page.mjs`) writes the page: `web/lib/` of this package. */
export const PAGE_ASSETS_DIR: string = fileURLToPath(new URL('../web/lib/', import.meta.url));

/** Options of {@link createPageHandler} and {@link registerPage}. */
export interface PageOptions {
  /** The chat route the page talks to: the chat handler's `path` (default `/api/chat`). A path of this origin. */
  readonly path?: string;
  /**
   * To open saved chats (read-only): the chat handler's own `auth` and `sessions` (the same
   * objects), served as `GET <path>/<chat id>/messages`. Without them, the page's "Open saved" gets 404.
   */
  readonly savedChats?: { readonly auth: Authenticate; readonly sessions: ChatSessions };
  /** Told of a saved chat that could not be read (a 500). Default: one line on stderr. */
  readonly onError?: (error: unknown, request: Request) => void;
  /** The folder of the built page (default {@link PAGE_ASSETS_DIR}). */
  readonly assetsDir?: string;
}

/** One file of the page, in memory. */
interface Asset {
  readonly body: Buffer;
  readonly type: string;
  readonly etag: string;
}

/**
 * What the page may load and reach: its own scripts and styles, and requests to its own origin
 * only, so that the API key typed into it cannot be sent anywhere else.
 */
const PAGE_SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
});

/** The page's paths and their files in the built folder. */
const ASSET_FILES: Readonly<Record<string, { readonly file: string; readonly type: string }>> = Object.freeze({
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/page/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/page/app.css': { file: 'app.css', type: 'text/css; charset=utf-8' },
});

/** The paths {@link registerPage} serves the page's files at. */
export const PAGE_PATHS: readonly string[] = Object.freeze(Object.keys(ASSET_FILES));

/**
 * The web page as a Web handler (`Request` → `Response`, or `undefined` for a request that is not
 * the page's, to pass on to the chat handler): `GET /` is the page — a chat on the AI SDK's
 * `useChat` with a live step timeline —, `/page/app.js` and `/page/app.css` its files (from memory,
 * with an `ETag`; revalidated on each load), and with `savedChats`, `GET <path>/<id>/messages`.
 *
 * @throws Error if the page is not built (`npm run build` writes it), TypeError for an option it does not know or a bad `path`.
 * @example
 * const page = createPageHandler({ savedChats: { auth, sessions } });
 * const chat = createChatHandler({ kernel, auth, sessions });
 * export default { fetch: async (request: Request) => (await page(request)) ?? chat(request) };
 */
export function createPageHandler(options: PageOptions = {}): RouteHandler {
  checkKnownOptions('createPageHandler', options, PAGE_OPTIONS);
  const base = chatPath(options.path, 'createPageHandler');
  const assets = loadAssets(options.assetsDir ?? PAGE_ASSETS_DIR, base);
  const savedChats =
    options.savedChats === undefined ? undefined : createSavedChatHandler({ ...options.savedChats, path: base, ...(options.onError === undefined ? {} : { onError: options.onError }) });
  return async (request) => {
    const pathname = new URL(request.url).pathname;
    const asset = assets.get(pathname);
    if (asset === undefined) return savedChats?.(request);
    if (request.method !== 'GET' && request.method !== 'HEAD') return new Response(null, { status: 405, headers: { allow: 'GET, HEAD' } });
    const headers = { 'content-type': asset.type, 'cache-control': 'no-cache', etag: asset.etag, ...PAGE_SECURITY_HEADERS };
    if (request.headers.get('if-none-match') === asset.etag) return new Response(null, { status: 304, headers });
    return new Response(request.method === 'HEAD' ? null : new Uint8Array(asset.body), { status: 200, headers: { ...headers, 'content-length': String(asset.body.byteLength) } });
  };
}

/**
 * Registers the page ({@link createPageHandler}) on a Fastify instance: `GET /`, `/page/app.js`,
 * `/page/app.css`, and with `savedChats`, `GET <path>/:id/messages` — routes more specific than the
 * chat handler's catch-all (`mountChatHandler`), so both live on one instance.
 *
 * @example
 * const sessions = directorySessions('/var/lib/kosong/sessions');
 * const app = createServer({ kernel, auth, sessions });
 * registerPage(app, { savedChats: { auth, sessions } });
 */
export function registerPage(app: FastifyInstance, options: PageOptions = {}): FastifyInstance {
  const handler = createPageHandler(options);
  const base = chatPath(options.path, 'registerPage');
  const serve = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const response = (await handler(webRequestOf(request))) ?? new Response(JSON.stringify({ error: { code: 'not_found', message: 'No such page' } }), { status: 404 });
    reply.status(response.status);
    response.headers.forEach((value, name) => void reply.header(name, value));
    return reply.send(response.body === null ? undefined : Buffer.from(await response.arrayBuffer()));
  };
  for (const path of PAGE_PATHS) app.get(path, serve);
  if (options.savedChats !== undefined) app.get(`${base}/:chatId/messages`, serve);
  return app;
}

/** A Fastify request (a GET: no body) as a Web `Request`, with its headers. */
function webRequestOf(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.raw.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  return new Request(`http://${headers.get('host') ?? 'localhost'}${request.raw.url ?? '/'}`, { method: request.method, headers });
}

/** The built page's files, read once; the page's `<meta name="kosong-api">` set to `path`. */
function loadAssets(directory: string, path: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  for (const [route, { file, type }] of Object.entries(ASSET_FILES)) {
    let body: Buffer;
    try {
      body = readFileSync(join(directory, file));
    } catch (error) {
      throw new Error(`The web page is not built: ${file} is missing in ${directory} (npm run build writes it: node plugins/server/scripts/bundle-page.mjs)`, { cause: error });
    }
    if (file === 'index.html') body = Buffer.from(body.toString('utf8').replace('<meta name="kosong-api" content="/api/chat" />', `<meta name="kosong-api" content="${escapeAttribute(path)}" />`));
    assets.set(route, { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` });
  }
  return assets;
}

function escapeAttribute(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

const PAGE_OPTIONS: KnownOptions<PageOptions> = { path: true, savedChats: true, onError: true, assetsDir: true };
