import { APIStatusError, ChatProviderError } from '@kosong/core';

/** The response headers' ids an error of the stream carries. */
export interface ResponseIds {
  /** `x-request-id`. */
  readonly requestId?: string | undefined;
  /** `x-trace-id`. */
  readonly traceId?: string | undefined;
}

/** What {@link OpenAIStreamError} knows of the error besides its message. */
export interface OpenAIStreamErrorOptions extends ResponseIds, ErrorOptions {
  /** The error's `code`. */
  readonly code?: string | undefined;
  /** The error's `type`. */
  readonly errorType?: string | undefined;
}

/**
 * An error the server sent inside a stream that began with HTTP 200 (an `error` chunk of Chat
 * Completions, an `error` or `response.failed` event of Responses) whose code stands for no HTTP
 * status: `insufficient_quota`, `invalid_prompt`, a code of a gateway, … The agent loop does not
 * retry it (errors whose code is a rate limit or a server error are {@link APIStatusError}s instead).
 */
export class OpenAIStreamError extends ChatProviderError {
  /** The error's `code`, as the server sent it. */
  readonly code: string | undefined;
  /** The error's `type`, as the server sent it. */
  readonly errorType: string | undefined;
  /** The response's `x-request-id`. */
  readonly requestId: string | undefined;
  /** The response's `x-trace-id`. */
  readonly traceId: string | undefined;

  constructor(message: string, options: OpenAIStreamErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = options.code;
    this.errorType = options.errorType;
    this.requestId = options.requestId;
    this.traceId = options.traceId;
  }
}

/**
 * The HTTP status each error `code` or `type` stands for, as OpenAI, Moonshot and the usual gateways
 * send them with an HTTP error status. An error sent inside a stream has no status of its own: it
 * gets this one, so a rate limit or a server error reported mid-stream is retried like the 429 or
 * 500 it stands for, and a bad key is a 401 like any other.
 */
const STATUS_OF: Readonly<Record<string, number>> = {
  invalid_request_error: 400,
  context_length_exceeded: 400,
  invalid_api_key: 401,
  invalid_authentication: 401,
  invalid_authentication_error: 401,
  authentication_error: 401,
  unauthorized: 401,
  permission_denied: 403,
  permission_denied_error: 403,
  permission_error: 403,
  unsupported_country_region_territory: 403,
  model_not_found: 404,
  not_found: 404,
  not_found_error: 404,
  resource_not_found_error: 404,
  rate_limit_exceeded: 429,
  rate_limit_error: 429,
  rate_limit_reached_error: 429,
  too_many_requests: 429,
  engine_overloaded_error: 429,
  server_error: 500,
  internal_error: 500,
  internal_server_error: 500,
  api_error: 500,
  bad_gateway: 502,
  service_unavailable: 503,
  overloaded: 503,
  overloaded_error: 503,
  vector_store_timeout: 504,
  gateway_timeout: 504,
};

/** Where an error came from, for its message: `The <source> sent …`. */
export type StreamErrorSource = 'Chat Completions stream' | 'Responses stream';

/**
 * The error for an error object a stream sent after HTTP 200: `{message, code, type, param}` as
 * OpenAI sends it (also a numeric `code` or `status`, as gateways like OpenRouter send it, or a bare
 * string). By the status its code, else its type, stands for: an {@link APIStatusError} (a numeric
 * `code`/`status` of 400–599 is taken as it is); else an {@link OpenAIStreamError} naming the code;
 * a {@link ChatProviderError} when it has neither code nor type. The message is `The <source> sent
 * <what> (<code>): <message>`, with no `Error:` prefix.
 */
export function streamError(source: StreamErrorSource, what: string, error: unknown, ids: ResponseIds = {}): ChatProviderError {
  const fields = typeof error === 'object' && error !== null && !Array.isArray(error) ? (error as Record<string, unknown>) : {};
  const code = text(fields['code']);
  const errorType = text(fields['type']);
  const numeric = httpStatus(fields['code']) ?? httpStatus(fields['status']);
  const label = code ?? errorType ?? (numeric === undefined ? undefined : String(numeric));
  const detail = text(fields['message']) ?? text(error) ?? (Object.keys(fields).length > 0 ? preview(error) : 'no message');
  const message = `The ${source} sent ${what}${label === undefined ? '' : ` (${label})`}: ${detail}`;
  const status = numeric ?? statusOf(code) ?? statusOf(errorType);
  if (status !== undefined) return new APIStatusError(status, message, { requestId: ids.requestId, traceId: ids.traceId });
  if (label === undefined) return new ChatProviderError(message);
  return new OpenAIStreamError(message, { code, errorType, requestId: ids.requestId, traceId: ids.traceId });
}

function statusOf(name: string | undefined): number | undefined {
  return name !== undefined && Object.hasOwn(STATUS_OF, name) ? STATUS_OF[name] : undefined;
}

/** A number (or a numeric string) that is an HTTP error status, 400–599. */
function httpStatus(value: unknown): number | undefined {
  const number = typeof value === 'string' && /^\d{3}$/.test(value) ? Number(value) : value;
  return typeof number === 'number' && Number.isInteger(number) && number >= 400 && number < 600 ? number : undefined;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function preview(value: unknown): string {
  const json = JSON.stringify(value) ?? String(value);
  return json.length > 200 ? `${json.slice(0, 200)}…` : json;
}
