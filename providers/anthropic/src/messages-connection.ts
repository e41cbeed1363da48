import Anthropic, { type ClientOptions } from '@anthropic-ai/sdk';
import type { JsonValue } from '@kosong/core';
import {
  ChatProviderError,
  clientOf,
  credentialHeaderValues,
  readBodyStart,
  redactSecrets,
  sameOriginRedirects,
  type Secrets,
  type SdkConnectionOptions,
} from '@kosong/core/provider-kit';

import { convertError } from './convert-error.js';
import { MessagesStream } from './messages-stream.js';

/** The Anthropic API's base URL, the default of the provider. */
export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com';

/** How a provider reaches the Messages API (the SDK's default timeout is 10 minutes). */
export interface ConnectionOptions extends SdkConnectionOptions<Anthropic, ClientOptions['fetch'], ClientOptions['logLevel'], ClientOptions['logger']> {
  /** The API key, sent as `x-api-key`. Required unless `client` is given. */
  readonly apiKey?: string;
  /** The API base URL; default `https://api.anthropic.com` (the environment is not read). */
  readonly baseURL?: string;
}

/**
 * The HTTP side of the provider: an `@anthropic-ai/sdk` client, and one streamed request per
 * {@link MessagesConnection.open}. The SDK builds and sends the request and turns error statuses
 * into its errors; the body of a successful response is read by {@link MessagesStream}.
 */
export class MessagesConnection {
  /** The SDK client. */
  readonly client: Anthropic;
  readonly #maxRetries: number;
  readonly #timeoutMs: number | undefined;
  readonly #headerSecrets: readonly string[];
  /** Set for a client given as `client`, whose `fetch` is not ours: it is asked to follow no redirect at all. */
  readonly #fetchOptions: { readonly redirect: 'manual' } | undefined;

  /** @throws {ChatProviderError} when there is neither an API key nor a client, or both a client and connection options. */
  constructor(options: ConnectionOptions) {
    this.#maxRetries = options.maxRetries ?? 0;
    this.#timeoutMs = options.timeoutMs;
    this.#headerSecrets = credentialHeaderValues(options.defaultHeaders);
    const client = clientOf(options, 'AnthropicChatProvider', 'Anthropic');
    if (client !== undefined) {
      this.client = client;
      this.#fetchOptions = { redirect: 'manual' };
      return;
    }
    this.client = new Anthropic({
      apiKey: options.apiKey,
      // explicit, so that neither ANTHROPIC_BASE_URL nor ANTHROPIC_AUTH_TOKEN is read behind the caller's back
      baseURL: options.baseURL ?? ANTHROPIC_BASE_URL,
      authToken: null,
      maxRetries: this.#maxRetries,
      logLevel: options.logLevel ?? 'off',
      // kosong's telemetry plugin makes the spans; the SDK's own would double them
      openTelemetry: false,
      ...(options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs }),
      ...(options.defaultHeaders === undefined ? {} : { defaultHeaders: { ...options.defaultHeaders } }),
      // redirects to another origin are not followed: the API key would go there
      fetch: sameOriginRedirects((options.fetch ?? ((input, init) => fetch(input, init))) as typeof fetch),
      ...(options.logger === undefined ? {} : { logger: options.logger }),
    });
  }

  /** The base URL requests go to. */
  get baseURL(): string {
    return this.client.baseURL;
  }

  /** The secrets errors must not show: the client's key and token, and credential-like default headers. */
  secrets(): Secrets {
    return [this.client.apiKey, this.client.authToken, ...this.#headerSecrets];
  }

  /**
   * Sends a streamed Messages request and returns its stream as soon as the response headers
   * arrive (the body is not read yet).
   *
   * @throws the signal's reason when it aborts; a {@link ChatProviderError} when the request fails
   * or the answer is not an event stream.
   */
  async open(body: Record<string, JsonValue>, headers: Readonly<Record<string, string>>, signal: AbortSignal | undefined): Promise<MessagesStream> {
    signal?.throwIfAborted();
    // One controller per request, linked to the caller's signal until the stream is done with, so
    // that a long-lived signal does not collect a listener per request.
    const request = new AbortController();
    const onAbort = (): void => request.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    const release = (): void => signal?.removeEventListener('abort', onAbort);
    const secrets = this.secrets();
    let response: Response;
    try {
      response = await this.client.messages
        .create(body as unknown as Anthropic.MessageCreateParamsStreaming, {
          signal: request.signal,
          headers: { ...headers },
          maxRetries: this.#maxRetries,
          ...(this.#timeoutMs === undefined ? {} : { timeout: this.#timeoutMs }),
          ...(this.#fetchOptions === undefined ? {} : { fetchOptions: this.#fetchOptions }),
        })
        .asResponse();
    } catch (error) {
      release();
      if (signal?.aborted) throw signal.reason;
      throw convertError(error, secrets);
    }
    const requestId = response.headers.get('request-id') ?? undefined;
    try {
      await expectEventStream(response, secrets);
    } catch (error) {
      release();
      request.abort();
      if (signal?.aborted) throw signal.reason;
      throw error;
    }
    return new MessagesStream(response.body!, {
      requestId,
      signal,
      idleTimeoutMs: this.#timeoutMs ?? this.client.timeout,
      abortRequest: (reason) => request.abort(reason),
      release,
      secrets,
    });
  }
}

/** How much of a body that is not an event stream an error quotes, in bytes. */
const PREVIEW_BYTES = 300;

/**
 * Rejects a successful response that is not an event stream (an HTML page from a proxy or a wrong
 * base URL, a JSON body), quoting the start of its body. A response without a content type is
 * taken as an event stream.
 */
async function expectEventStream(response: Response, secrets: Secrets): Promise<void> {
  const type = response.headers.get('content-type');
  if (response.body !== null && (type === null || /^\s*text\/event-stream\b/i.test(type))) return;
  const start = await readBodyStart(response.body, PREVIEW_BYTES);
  const text = start.more ? `${start.text}…` : start.text;
  const quoted = text.trim() === '' ? 'an empty body' : JSON.stringify(redactSecrets(text.trim(), secrets));
  throw new ChatProviderError(
    `The server answered ${response.status} with ${type ?? 'no content type'} instead of an event stream (is the base URL right?): ${quoted}`,
  );
}
