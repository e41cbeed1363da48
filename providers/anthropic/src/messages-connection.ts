import Anthropic, { type ClientOptions } from '@anthropic-ai/sdk';
import type { JsonValue } from '@kosong/core';
import { ChatProviderError, credentialHeaderValues, redactSecrets, sameOriginRedirects, type Secrets } from '@kosong/core/provider-kit';

import { convertError } from './convert-error.js';
import { MessagesStream } from './messages-stream.js';

/** The Anthropic API's base URL, the default of the provider. */
export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com';

/** How a provider reaches the Messages API. */
export interface ConnectionOptions {
  /** The API key, sent as `x-api-key`. Required unless `client` is given. */
  readonly apiKey?: string;
  /** The API base URL; default `https://api.anthropic.com` (the environment is not read). */
  readonly baseURL?: string;
  /** Headers sent with every request. */
  readonly defaultHeaders?: Readonly<Record<string, string>>;
  /** A `fetch` to use instead of the global one (a proxy, a recorder, …). */
  readonly fetch?: ClientOptions['fetch'];
  /**
   * How long to wait for the response to start, and then for each next chunk of the stream, in ms.
   * Default: the client's timeout (the SDK's default is 10 minutes).
   */
  readonly timeoutMs?: number;
  /**
   * Retries of the SDK itself. Default 0: kosong's agent loop retries failed steps (with backoff and
   * `retry-after`), and SDK retries below it would multiply the attempts. Applies to a given `client` too.
   */
  readonly maxRetries?: number;
  /**
   * An `Anthropic` client to use as it is configured (base URL, key, fetch, …). Mutually exclusive
   * with `apiKey`, `baseURL`, `defaultHeaders`, `fetch`, `logLevel` and `logger`.
   */
  readonly client?: Anthropic;
  /** The SDK's log level. Default `off`: the provider reports every failure as an error. */
  readonly logLevel?: ClientOptions['logLevel'];
  /** The SDK's logger (default `console`). */
  readonly logger?: ClientOptions['logger'];
}

const CLIENT_EXCLUSIVE = ['apiKey', 'baseURL', 'defaultHeaders', 'fetch', 'logLevel', 'logger'] as const;

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
    if (options.client !== undefined) {
      const mixed = CLIENT_EXCLUSIVE.filter((key) => options[key] !== undefined);
      if (mixed.length > 0) {
        throw new ChatProviderError(`AnthropicChatProvider: pass either \`client\` or ${mixed.map((key) => `\`${key}\``).join(', ')}, not both`);
      }
      this.client = options.client;
      this.#fetchOptions = { redirect: 'manual' };
      return;
    }
    if (options.apiKey === undefined || options.apiKey === '') {
      throw new ChatProviderError('AnthropicChatProvider needs an `apiKey` (or an Anthropic `client`)');
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

/** How much of a body that is not an event stream an error quotes. */
const PREVIEW_CHARS = 300;

/**
 * Rejects a successful response that is not an event stream (an HTML page from a proxy or a wrong
 * base URL, a JSON body), quoting the start of its body. A response without a content type is
 * taken as an event stream.
 */
async function expectEventStream(response: Response, secrets: Secrets): Promise<void> {
  const type = response.headers.get('content-type');
  if (response.body !== null && (type === null || /^\s*text\/event-stream\b/i.test(type))) return;
  const text = response.body === null ? '' : await readStart(response.body, PREVIEW_CHARS);
  const quoted = text.trim() === '' ? 'an empty body' : JSON.stringify(redactSecrets(text.trim(), secrets));
  throw new ChatProviderError(
    `The server answered ${response.status} with ${type ?? 'no content type'} instead of an event stream (is the base URL right?): ${quoted}`,
  );
}

async function readStart(body: ReadableStream<Uint8Array>, chars: number): Promise<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  try {
    while (text.length < chars) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  } catch {
    // the preview is best effort
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return text.length > chars ? `${text.slice(0, chars)}…` : text;
}
