import type { JsonValue } from '@kosong/core';
import { ChatProviderError, credentialHeaderValues, redactSecrets, sameOriginRedirects, type Secrets } from '@kosong/core/provider-kit';
import OpenAI, { type ClientOptions } from 'openai';

import { ChatCompletionsStream } from './chat-completions-stream.js';
import { convertError } from './convert-error.js';
import { CHAT_COMPLETIONS_ENDPOINT, type StreamConverter, type StreamingEndpoint } from './streaming-endpoint.js';

/** How a provider reaches an OpenAI(-compatible) API. */
export interface ConnectionOptions {
  /** The API key, sent as `Authorization: Bearer …`. Required unless `client` is given. */
  readonly apiKey?: string;
  /** The API base URL, e.g. `https://api.openai.com/v1` (the provider's default when left out). */
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
   * An `OpenAI` client to use as it is configured (base URL, key, fetch, …). Mutually exclusive with
   * `apiKey`, `baseURL`, `defaultHeaders`, `fetch`, `logLevel` and `logger`.
   */
  readonly client?: OpenAI;
  /** The SDK's log level. Default `off`: the provider reports every failure as an error. */
  readonly logLevel?: ClientOptions['logLevel'];
  /** The SDK's logger (default `console`); its debug output redacts the `Authorization` header. */
  readonly logger?: ClientOptions['logger'];
}

/** Connection settings a provider class adds. */
export interface ConnectionDefaults {
  /** The provider's class name, for errors. */
  readonly provider: string;
  readonly baseURL: string;
  /** Extra options of the clients this connection creates. */
  readonly clientOptions?: Partial<ClientOptions>;
}

const CLIENT_EXCLUSIVE = ['apiKey', 'baseURL', 'defaultHeaders', 'fetch', 'logLevel', 'logger'] as const;

/**
 * The HTTP side of the providers on the `openai` SDK (Chat Completions and, with the Responses
 * endpoint, Responses): an `openai` client, and one streamed request per
 * {@link ChatCompletionsConnection.open} with abort, timeouts and error conversion.
 */
export class ChatCompletionsConnection {
  /** The `openai` client. */
  readonly client: OpenAI;
  readonly #maxRetries: number;
  readonly #timeoutMs: number | undefined;
  readonly #headerSecrets: readonly string[];
  /** Set for a client given as `client`, whose `fetch` is not ours: it is asked to follow no redirect at all. */
  readonly #fetchOptions: { readonly redirect: 'manual' } | undefined;

  /** @throws {ChatProviderError} when there is neither an API key nor a client, or both a client and connection options. */
  constructor(options: ConnectionOptions, defaults: ConnectionDefaults) {
    this.#maxRetries = options.maxRetries ?? 0;
    this.#timeoutMs = options.timeoutMs;
    this.#headerSecrets = credentialHeaderValues(options.defaultHeaders);
    if (options.client !== undefined) {
      const mixed = CLIENT_EXCLUSIVE.filter((key) => options[key] !== undefined);
      if (mixed.length > 0) {
        throw new ChatProviderError(`${defaults.provider}: pass either \`client\` or ${mixed.map((key) => `\`${key}\``).join(', ')}, not both`);
      }
      this.client = options.client;
      this.#fetchOptions = { redirect: 'manual' };
      return;
    }
    if (options.apiKey === undefined || options.apiKey === '') {
      throw new ChatProviderError(`${defaults.provider} needs an \`apiKey\` (or an OpenAI \`client\`)`);
    }
    this.client = new OpenAI({
      apiKey: options.apiKey,
      baseURL: options.baseURL ?? defaults.baseURL,
      maxRetries: this.#maxRetries,
      logLevel: options.logLevel ?? 'off',
      ...(options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs }),
      ...(options.defaultHeaders === undefined ? {} : { defaultHeaders: { ...options.defaultHeaders } }),
      // redirects to another origin are not followed: the API key would go there
      fetch: sameOriginRedirects((options.fetch ?? ((input, init) => fetch(input, init))) as typeof fetch),
      ...(options.logger === undefined ? {} : { logger: options.logger }),
      ...defaults.clientOptions,
    });
  }

  /** The base URL requests go to. */
  get baseURL(): string {
    return this.client.baseURL;
  }

  /** The secrets errors must not show: the client's API key and credential-like default headers. */
  secrets(): Secrets {
    return [typeof this.client.apiKey === 'string' ? this.client.apiKey : undefined, ...this.#headerSecrets];
  }

  /**
   * Sends a streamed request to `endpoint` (default Chat Completions) and returns its stream as soon
   * as the response headers arrive (the body is not read yet).
   *
   * @throws the signal's reason when it aborts; a {@link ChatProviderError} when the request fails.
   */
  async open(
    body: Record<string, JsonValue>,
    signal: AbortSignal | undefined,
    converter: StreamConverter,
    endpoint: StreamingEndpoint = CHAT_COMPLETIONS_ENDPOINT,
  ): Promise<ChatCompletionsStream> {
    signal?.throwIfAborted();
    const request = new AbortController();
    const requestSignal = signal === undefined ? request.signal : AbortSignal.any([signal, request.signal]);
    let response: Response;
    try {
      // The SDK builds, authenticates and sends the request and maps error statuses; the body of a
      // successful response is read by ChatCompletionsStream (the SDK's own SSE stream costs far more).
      response = await endpoint
        .send(this.client, body, {
          signal: requestSignal,
          maxRetries: this.#maxRetries,
          ...(this.#timeoutMs === undefined ? {} : { timeout: this.#timeoutMs }),
          ...(this.#fetchOptions === undefined ? {} : { fetchOptions: this.#fetchOptions }),
        })
        .asResponse();
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      throw convertError(error, { secrets: this.secrets() });
    }
    const idleTimeoutMs = this.#timeoutMs ?? this.client.timeout;
    const contentType = response.headers.get('content-type');
    if (response.body === null || !mayBeEventStream(contentType)) {
      const preview = await bodyPreview(response, idleTimeoutMs);
      request.abort();
      if (signal?.aborted) throw signal.reason;
      throw new ChatProviderError(
        redactSecrets(
          `The server answered HTTP ${response.status} with content type "${contentType}" instead of an event stream (text/event-stream): ` +
            `is the base URL (${this.baseURL}) a ${endpoint.name} API? The body begins: ${JSON.stringify(preview)}`,
          this.secrets(),
        ),
      );
    }
    return new ChatCompletionsStream(response.body, {
      converter,
      endpoint,
      headers: response.headers,
      signal,
      idleTimeoutMs,
      abortRequest: (reason) => request.abort(reason),
      secrets: () => this.secrets(),
    });
  }
}

/** Whether a response of this content type may be an event stream (some servers send SSE as `text/plain`, or no type). */
function mayBeEventStream(contentType: string | null): boolean {
  if (contentType === null) return true;
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  return type === '' || type === 'text/event-stream' || type === 'text/plain';
}

const PREVIEW_BYTES = 300;

/** The first bytes of a body as text (for an error message); gives up after `timeoutMs`. The body is cancelled. */
async function bodyPreview(response: Response, timeoutMs: number): Promise<string> {
  const reader = response.body?.getReader();
  if (reader === undefined) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  const timer = setTimeout(() => void reader.cancel().catch(() => undefined), timeoutMs);
  try {
    while (size < PREVIEW_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } catch {
    // what arrived is enough for a preview
  } finally {
    clearTimeout(timer);
    void reader.cancel().catch(() => undefined);
  }
  const text = Buffer.concat(chunks).toString('utf8', 0, Math.min(size, PREVIEW_BYTES));
  return size > PREVIEW_BYTES ? `${text}…` : text;
}
