import { APITimeoutError, ChatProviderError, credentialHeaderValues, readBodyStart, sameOriginRedirects } from '@kosong/core/provider-kit';
import { GoogleGenAI, type Content, type GenerateContentConfig, type GoogleGenAIOptions } from '@google/genai';

import { convertError, statusError, type FailedResponse } from './convert-error.js';
import { GeminiStream } from './gemini-stream.js';
import type { RequestContent } from './request-contents.js';
import type { ResponseConverter } from './response-converter.js';

/** The Gemini API's base URL, the default outside Vertex AI. */
export const GEMINI_BASE_URL = 'https://generativelanguage.googleapis.com/';

/** Vertex AI settings: a project and location (credentials from Application Default Credentials), or an API key (express mode). */
export interface VertexAIOptions {
  /** The Google Cloud project. */
  readonly project?: string;
  /** The region, e.g. `us-central1`; default `global`. */
  readonly location?: string;
  /** Options of `google-auth-library` (credentials, key file, scopes) when no API key is given. */
  readonly googleAuthOptions?: GoogleGenAIOptions['googleAuthOptions'];
}

/** How a {@link GeminiChatProvider} reaches Gemini. */
export interface GeminiConnectionOptions {
  /** The API key, sent as `x-goog-api-key`. Required for the Gemini API; on Vertex AI, express mode. */
  readonly apiKey?: string;
  /** The base URL, e.g. a proxy. Default: the Gemini API's, or Vertex AI's for the location. */
  readonly baseURL?: string;
  /** The API version in the path; default the SDK's (`v1beta` for Gemini, `v1beta1` for Vertex AI). */
  readonly apiVersion?: string;
  /** Use Vertex AI instead of the Gemini API: `true` (with an `apiKey`), or a project and location. */
  readonly vertexAI?: boolean | VertexAIOptions;
  /** Headers sent with every request. */
  readonly defaultHeaders?: Readonly<Record<string, string>>;
  /** A `fetch` to use instead of the global one (a proxy, a recorder, …). Media downloads use it too. */
  readonly fetch?: typeof fetch;
  /**
   * How long to wait for the response to start, and then for each next chunk of the stream, in ms.
   * Default 300 000 (5 minutes, which is also where Node's own `fetch` gives up; pass a `fetch` with
   * a longer undici timeout to wait longer).
   */
  readonly timeoutMs?: number;
}

/** The default of {@link GeminiConnectionOptions.timeoutMs}. */
export const DEFAULT_TIMEOUT_MS = 300_000;

/** A streamed request: what the SDK turns into the JSON body. */
export interface StreamRequest {
  readonly model: string;
  readonly contents: readonly RequestContent[];
  readonly config: GenerateContentConfig;
}

/** Bytes of an error body kept for the error message (an error body can be anything, of any size). */
const ERROR_BODY_BYTES = 16 * 1024;

/**
 * The HTTP side of {@link GeminiChatProvider}: a `@google/genai` client, and one streamed
 * `generateContent` request per {@link GeminiConnection.open}.
 *
 * The SDK builds and sends the request (URL, JSON body, API key or Vertex AI credentials) and
 * detects a failed status; the provider's own `fetch` hook keeps the response, so the SDK never
 * reads its body: {@link GeminiStream} parses it. A failed response's body is read up to 16 KiB
 * for the error.
 */
export class GeminiConnection {
  readonly client: GoogleGenAI;
  readonly #fetch: typeof fetch;
  /** {@link GeminiConnection.fetch} following no redirect to another origin: what API requests go through (they carry the credentials). */
  readonly #apiFetch: typeof fetch;
  readonly #timeoutMs: number;
  readonly #secrets: readonly (string | undefined)[];

  /** @throws {ChatProviderError} when the options cannot reach Gemini (no API key for the Gemini API, say). */
  constructor(options: GeminiConnectionOptions) {
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.#apiFetch = sameOriginRedirects(this.#fetch);
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!(this.#timeoutMs > 0)) throw new ChatProviderError(`GeminiChatProvider: timeoutMs must be a positive number, not ${options.timeoutMs}`);
    this.#secrets = [options.apiKey, ...credentialHeaderValues(options.defaultHeaders)];
    const vertex = options.vertexAI === true ? {} : options.vertexAI === false ? undefined : options.vertexAI;
    if (vertex === undefined && (options.apiKey === undefined || options.apiKey === '')) {
      throw new ChatProviderError('GeminiChatProvider needs an `apiKey` (or `vertexAI` with a project)');
    }
    if (vertex !== undefined && options.apiKey === undefined && vertex.project === undefined) {
      throw new ChatProviderError('GeminiChatProvider on Vertex AI needs a `vertexAI.project` (or an `apiKey` for express mode)');
    }
    const baseUrl = options.baseURL ?? (vertex === undefined ? GEMINI_BASE_URL : undefined);
    const httpOptions = {
      ...(baseUrl === undefined ? {} : { baseUrl }),
      ...(options.defaultHeaders === undefined ? {} : { headers: { ...options.defaultHeaders } }),
    };
    const clientOptions: GoogleGenAIOptions = {
      ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
      ...(options.apiVersion === undefined ? {} : { apiVersion: options.apiVersion }),
      ...(vertex === undefined
        ? { vertexai: false }
        : {
            vertexai: true,
            ...(options.apiKey === undefined ? { project: vertex.project, location: vertex.location ?? 'global' } : {}),
            ...(vertex.googleAuthOptions === undefined ? {} : { googleAuthOptions: vertex.googleAuthOptions }),
          }),
      httpOptions,
    };
    try {
      this.client = new GoogleGenAI(clientOptions);
    } catch (error) {
      throw convertError(error, this.#secrets);
    }
  }

  /** Whether requests go to Vertex AI. */
  get vertexAI(): boolean {
    return this.client.vertexai;
  }

  /** The `fetch` requests and media downloads go through (API requests follow no redirect to another origin). */
  get fetch(): typeof fetch {
    return this.#fetch;
  }

  /** Secrets errors must not show: the API key and credential-like default headers. */
  get secrets(): readonly (string | undefined)[] {
    return this.#secrets;
  }

  /**
   * Sends a streamed request and returns its stream once the response headers arrived (the body is
   * not read yet).
   *
   * @throws the signal's reason when it aborts; an {@link APIStatusError} for a failed status; an
   * {@link APITimeoutError} when no response starts in time; another {@link ChatProviderError} when
   * the request fails otherwise or the response is not a stream of server-sent events.
   */
  async open(request: StreamRequest, signal: AbortSignal | undefined, converter: ResponseConverter): Promise<GeminiStream> {
    signal?.throwIfAborted();
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      signal?.removeEventListener('abort', onAbort);
      if (!controller.signal.aborted) controller.abort(new Error('request finished'));
    };
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new APITimeoutError(`No response within ${this.#timeoutMs} ms`));
    }, this.#timeoutMs);
    timer.unref();

    let response: Response | undefined;
    let failed: FailedResponse | undefined;
    const keepResponse = async (input: Parameters<typeof fetch>[0], init?: RequestInit): Promise<Response> => {
      const received = await this.#apiFetch(input, init);
      if (received.ok) {
        response = received;
        // The SDK gets an empty copy: the body is the stream's to read.
        return new Response(null, { status: received.status, statusText: received.statusText, headers: received.headers });
      }
      const { text: body } = await readBodyStart(received.body, ERROR_BODY_BYTES);
      failed = { status: received.status, statusText: received.statusText, headers: received.headers, body };
      return new Response(body, { status: received.status, statusText: received.statusText, headers: { 'content-type': 'text/plain' } });
    };
    try {
      await this.client.models.generateContentStream({
        model: request.model,
        contents: request.contents as Content[],
        config: { ...request.config, abortSignal: controller.signal, automaticContinuation: false, httpOptions: { fetch: keepResponse } },
      });
    } catch (error) {
      release();
      if (signal?.aborted) throw signal.reason;
      if (timedOut) throw new APITimeoutError(`No response within ${this.#timeoutMs} ms`);
      if (failed !== undefined) throw statusError(failed, this.#secrets);
      throw convertError(error, this.#secrets);
    } finally {
      clearTimeout(timer);
    }
    if (response === undefined) {
      release();
      throw new ChatProviderError('The Gemini SDK returned without sending the request');
    }
    const type = response.headers.get('content-type');
    if (type !== null && !type.toLowerCase().includes('text/event-stream')) {
      const { text: start } = await readBodyStart(response.body, 1024);
      release();
      throw convertError(
        new ChatProviderError(`The server answered ${response.status} with ${type}, not a stream of server-sent events: ${start.replace(/\s+/g, ' ').slice(0, 200)}`),
        this.#secrets,
      );
    }
    return new GeminiStream(response, {
      converter,
      signal,
      idleTimeoutMs: this.#timeoutMs,
      abortRequest: (reason) => controller.abort(reason),
      release,
      secrets: this.#secrets,
    });
  }
}
