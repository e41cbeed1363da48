import { ChatProviderError } from '@kosong/core';

import { acceptedTypes, DEFAULT_TYPE, mediaTypeFromURL, normalizeMediaType, type MediaKind } from './media-types.js';

/** How media given by URL reach Gemini. */
export interface MediaOptions {
  /**
   * What to do with an `http(s)` URL: `fetch` (default) downloads it (with the step's signal, the
   * size cap and the timeout) and sends the bytes inline; `file-uri` sends the URL as `fileData`
   * for the API to read itself (Vertex AI reads public URLs; the Gemini API reads its own Files API
   * URLs). `gs://` URLs and Gemini Files API URLs always go as `fileData`.
   */
  readonly urls?: 'fetch' | 'file-uri';
  /** Largest download, in bytes; default 20 MiB (Gemini's limit for a whole inline request). */
  readonly maxBytes?: number;
  /** Longest download, in ms; default 30 s. */
  readonly timeoutMs?: number;
}

/** A media part of a Gemini request: bytes inline, or a URI the API reads. */
export type MediaPart =
  | { readonly inlineData: { readonly mimeType: string; readonly data: string } }
  | { readonly fileData: { readonly fileUri: string; readonly mimeType: string } };

/** The defaults of {@link MediaOptions}. */
export const DEFAULT_MAX_MEDIA_BYTES = 20 * 1024 * 1024;
export const DEFAULT_MEDIA_TIMEOUT_MS = 30_000;

const URL_IN_ERRORS = 120;

/**
 * Resolves the media URLs of one request to Gemini parts (kosong spec §7.6, done better: the
 * original downloads synchronously with no limit). Each URL is resolved once per request, and
 * downloads run concurrently: {@link MediaResolver.prefetch} starts them, {@link MediaResolver.part}
 * waits for one. {@link MediaResolver.close} stops those still running.
 *
 * Every failure is a {@link ChatProviderError} naming the URL (cut to 120 characters) — except an
 * abort of the caller's signal, which rejects with the signal's reason.
 */
export class MediaResolver {
  readonly #controller = new AbortController();
  readonly #resolved = new Map<string, Promise<MediaPart>>();
  readonly #maxBytes: number;
  readonly #timeoutMs: number;
  readonly #urls: 'fetch' | 'file-uri';
  readonly #unlink: () => void;
  /** Rejects with the first failure of any download, so a later one's failure is not waited behind a slow one. */
  readonly #firstFailure: Promise<never>;
  #fail: (error: unknown) => void = () => undefined;

  constructor(
    options: MediaOptions,
    private readonly fetchImpl: typeof fetch,
    private readonly signal: AbortSignal | undefined,
  ) {
    this.#maxBytes = options.maxBytes ?? DEFAULT_MAX_MEDIA_BYTES;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_MEDIA_TIMEOUT_MS;
    this.#urls = options.urls ?? 'fetch';
    const onAbort = (): void => this.#controller.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    this.#unlink = () => signal?.removeEventListener('abort', onAbort);
    this.#firstFailure = new Promise<never>((_, reject) => {
      this.#fail = reject;
    });
    this.#firstFailure.catch(() => undefined);
  }

  /** Starts resolving a URL (a download runs in the background); a failure surfaces in {@link part}. */
  prefetch(kind: MediaKind, url: string): void {
    this.part(kind, url).catch(() => undefined);
  }

  /** The Gemini part for a media URL; rejects as soon as any download of this request failed. */
  part(kind: MediaKind, url: string): Promise<MediaPart> {
    const key = `${kind} ${url}`;
    let part = this.#resolved.get(key);
    if (part === undefined) {
      part = this.#resolve(kind, url);
      part.catch((error: unknown) => this.#fail(error));
      this.#resolved.set(key, part);
    }
    return Promise.race([part, this.#firstFailure]);
  }

  /** Stops the downloads still running and forgets the caller's signal. */
  close(): void {
    this.#unlink();
    if (!this.#controller.signal.aborted) this.#controller.abort(new Error('media no longer needed'));
  }

  async #resolve(kind: MediaKind, url: string): Promise<MediaPart> {
    if (url.startsWith('data:')) return dataURLPart(kind, url);
    if (url.startsWith('gs://') || isGeminiFileURL(url)) return fileURIPart(kind, url);
    if (!/^https?:\/\//i.test(url)) {
      throw new ChatProviderError(`Unsupported ${kind} URL (only data:, http(s): and gs: URLs are): ${cut(url)}`);
    }
    if (this.#urls === 'file-uri') return fileURIPart(kind, url);
    return this.#download(kind, url);
  }

  async #download(kind: MediaKind, url: string): Promise<MediaPart> {
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), this.#timeoutMs);
    const signal = AbortSignal.any([this.#controller.signal, timeout.signal]);
    const fail = (why: string): ChatProviderError => new ChatProviderError(`Could not fetch the ${kind} at ${cut(url)}: ${why}`);
    const stopped = (error: unknown): unknown => {
      if (this.signal?.aborted) return this.signal.reason;
      if (timeout.signal.aborted) return fail(`no complete answer within ${this.#timeoutMs} ms`);
      if (this.#controller.signal.aborted) return fail('the request was given up');
      return ChatProviderError.isInstance(error) ? error : fail(describe(error));
    };
    try {
      let response: Response;
      try {
        response = await this.fetchImpl(url, { signal, redirect: 'follow' });
      } catch (error) {
        throw stopped(error);
      }
      if (!response.ok) {
        await response.body?.cancel().catch(() => undefined);
        throw fail(`HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`);
      }
      const mimeType = this.#mediaType(kind, url, response.headers.get('content-type'), fail, response);
      const declared = Number(response.headers.get('content-length') ?? Number.NaN);
      if (Number.isFinite(declared) && declared > this.#maxBytes) {
        await response.body?.cancel().catch(() => undefined);
        throw fail(`it is ${declared} bytes, more than the cap of ${this.#maxBytes} bytes`);
      }
      let bytes: Buffer;
      try {
        bytes = await readCapped(response, this.#maxBytes, () => fail(`it is larger than the cap of ${this.#maxBytes} bytes`));
      } catch (error) {
        throw stopped(error);
      }
      return { inlineData: { mimeType, data: bytes.toString('base64') } };
    } finally {
      clearTimeout(timer);
    }
  }

  #mediaType(kind: MediaKind, url: string, header: string | null, fail: (why: string) => ChatProviderError, response: Response): string {
    const served = header === null ? undefined : normalizeMediaType(header);
    if (served !== undefined && served.startsWith(`${kind}/`)) {
      if (acceptedTypes(kind).has(served)) return served;
      void response.body?.cancel().catch(() => undefined);
      throw fail(`Gemini does not take ${kind}s of type ${served} (it takes ${[...acceptedTypes(kind)].join(', ')})`);
    }
    if (served !== undefined && served !== 'application/octet-stream' && served !== 'binary/octet-stream') {
      void response.body?.cancel().catch(() => undefined);
      throw fail(`the server sent ${served}, not an ${kind}`);
    }
    return mediaTypeFromURL(url) ?? DEFAULT_TYPE[kind];
  }
}

/** A `data:<type>;base64,<data>` URL as inline data (kosong spec §7.6 checks and texts). */
function dataURLPart(kind: MediaKind, url: string): MediaPart {
  const separator = url.indexOf(';base64,');
  if (separator === -1) throw new ChatProviderError(`Invalid data URL for ${kind}: ${cut(url)}`);
  const mimeType = normalizeMediaType(url.slice('data:'.length, separator));
  if (!acceptedTypes(kind).has(mimeType)) {
    const supported = kind === 'audio' ? `. Supported types: ${[...acceptedTypes(kind)].join(', ')}` : '';
    throw new ChatProviderError(`Unsupported media type for base64 ${kind}: ${mimeType}, url: ${cut(url)}${supported}`);
  }
  return { inlineData: { mimeType, data: url.slice(separator + ';base64,'.length) } };
}

function fileURIPart(kind: MediaKind, url: string): MediaPart {
  return { fileData: { fileUri: url, mimeType: mediaTypeFromURL(url) ?? DEFAULT_TYPE[kind] } };
}

/** A file of the Gemini Files API (`…/v1beta/files/abc`), which the API reads by URI. */
function isGeminiFileURL(url: string): boolean {
  return /^https:\/\/generativelanguage\.googleapis\.com\/[^?#]*\/files\/[^/?#]+/.test(url);
}

/** The body, or the error of `tooLarge()` as soon as it passes `maxBytes` (the rest is not read). */
async function readCapped(response: Response, maxBytes: number, tooLarge: () => Error): Promise<Buffer> {
  const reader = response.body?.getReader();
  if (reader === undefined) return Buffer.alloc(0);
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, total);
}

function describe(error: unknown): string {
  const parts: string[] = [];
  for (let current = error, depth = 0; current instanceof Error && depth < 3; current = current.cause, depth++) parts.push(current.message);
  return parts.length > 0 ? parts.join(': ') : String(error);
}

function cut(url: string): string {
  return url.length > URL_IN_ERRORS ? `${url.slice(0, URL_IN_ERRORS)}…` : url;
}
