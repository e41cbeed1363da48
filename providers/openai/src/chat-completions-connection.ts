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
import OpenAI, { type ClientOptions } from 'openai';

import { ChatCompletionsStream } from './chat-completions-stream.js';
import { convertError } from './convert-error.js';
import { CHAT_COMPLETIONS_ENDPOINT, type StreamConverter, type StreamingEndpoint } from './streaming-endpoint.js';

/** How a provider reaches an OpenAI(-compatible) API (the SDK's default timeout is 10 minutes; its logger's debug output redacts the `Authorization` header). */
export interface ConnectionOptions extends SdkConnectionOptions<OpenAI, ClientOptions['fetch'], ClientOptions['logLevel'], ClientOptions['logger']> {
  /** The API key, sent as `Authorization: Bearer …`. Required unless `client` is given. */
  readonly apiKey?: string;
}

/** Connection settings a provider class adds. */
export interface ConnectionDefaults {
  /** The provider's class name, for errors. */
  readonly provider: string;
  readonly baseURL: string;
  /** Extra options of the clients this connection creates. */
  readonly clientOptions?: Partial<ClientOptions>;
}

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
    const client = clientOf(options, defaults.provider, 'OpenAI');
    if (client !== undefined) {
      this.client = client;
      this.#fetchOptions = { redirect: 'manual' };
      return;
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
      const start = await readBodyStart(response.body, PREVIEW_BYTES, idleTimeoutMs);
      const preview = start.more ? `${start.text}…` : start.text;
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

/** How much of a body that is not an event stream an error quotes, in bytes. */
const PREVIEW_BYTES = 300;
