import { APIConnectionError, APIStatusError, APITimeoutError, ChatProviderError, errorChainMessages, redactSecrets, redirectRefusal, retryAfterSeconds, scrubSecrets, type Secrets, transportFailureKind } from '@kosong/core';


/**
 * The HTTP status of each Anthropic error `type` (the API's error reference). An `error` event in a
 * stream has no status of its own: it gets the one its type has over plain HTTP, so that, e.g., an
 * `overloaded_error` mid-stream is retried like a 529 response.
 */
const STATUS_OF_ERROR_TYPE: Readonly<Record<string, number>> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

/**
 * The error of an `error` event in the stream (`{type: 'error', error: {type, message}}`): an
 * {@link APIStatusError} with the status of its type (`overloaded_error` → 529, `api_error` → 500,
 * …) and the response's request id; a {@link ChatProviderError} for a type the API does not document.
 */
export function streamErrorEvent(event: Record<string, unknown>, requestId: string | undefined, secrets: Secrets): ChatProviderError {
  const detail = asRecord(event['error']) ?? {};
  const type = typeof detail['type'] === 'string' ? detail['type'] : 'unknown_error';
  const message = typeof detail['message'] === 'string' ? detail['message'] : JSON.stringify(event);
  const text = redactSecrets(`Anthropic stream error (${type}): ${message}`, secrets);
  const status = STATUS_OF_ERROR_TYPE[type];
  return status === undefined ? new ChatProviderError(text) : new APIStatusError(status, text, { requestId });
}

/**
 * Maps an error of the `@anthropic-ai/sdk` client, of `fetch` or of reading the stream to the kosong
 * provider errors (kosong spec §2.6, §7.5):
 *
 * - an SDK status error → {@link APIStatusError} with the status, the `request-id`, and the wait of
 *   `retry-after-ms` / `retry-after` (seconds or an HTTP date); the message names the Anthropic
 *   error type and its message, or, for a redirect that was not followed (see
 *   `sameOriginRedirects`), where it led and why;
 * - an SDK timeout, a `fetch` timeout → {@link APITimeoutError} (checked before connection errors,
 *   of which the SDK's timeout is a kind);
 * - an SDK connection error, a connection that breaks mid-stream (`terminated`, socket errors) →
 *   {@link APIConnectionError};
 * - anything else → {@link ChatProviderError} `Anthropic error: …`.
 *
 * A {@link ChatProviderError} is returned as it is, or as a redacted copy if a secret is reachable
 * from it. No message holds a secret, and the original error is kept as `cause` with no secret
 * reachable from it (core's `scrubSecrets`: a redacted copy where the SDK error holds one anywhere,
 * e.g. response headers echoing `Authorization`). Aborts are not handled here: callers check their
 * signal first.
 */
export function convertError(error: unknown, secrets: Secrets): ChatProviderError {
  if (ChatProviderError.isInstance(error)) return scrubSecrets(error, secrets);
  const cause: ErrorOptions = { cause: scrubSecrets(error, secrets) };
  const classes = classNames(error);
  const message = redactSecrets(errorChainMessages(error, 1)[0] ?? '', secrets);

  if (classes.has('APIError')) {
    const sdk = error as { status?: unknown; headers?: unknown; requestID?: unknown; type?: unknown; apiMessage?: unknown };
    if (typeof sdk.status === 'number') {
      const headers = isHeaders(sdk.headers) ? sdk.headers : undefined;
      const type = typeof sdk.type === 'string' ? sdk.type : undefined;
      const detail = typeof sdk.apiMessage === 'string' ? redactSecrets(sdk.apiMessage, secrets) : message;
      const refusal = redirectRefusal(sdk.status, headers);
      const text = refusal === undefined ? `Anthropic API error ${sdk.status}${type === undefined ? '' : ` (${type})`}: ${detail}` : redactSecrets(refusal, secrets);
      return new APIStatusError(sdk.status, text, {
        ...cause,
        requestId: (typeof sdk.requestID === 'string' ? sdk.requestID : undefined) ?? headers?.get('request-id') ?? undefined,
        retryAfterSeconds: retryAfterSeconds(headers),
      });
    }
    if (classes.has('APIConnectionTimeoutError')) return new APITimeoutError(message, cause);
    if (classes.has('APIConnectionError') || classes.has('APIUserAbortError')) {
      return new APIConnectionError(withCauses(message, (error as Error).cause, secrets), cause);
    }
  }
  if (error instanceof SyntaxError) {
    return new ChatProviderError(`The server sent malformed stream data (an event that is not JSON): ${message}`, cause);
  }
  const kind = transportFailureKind(error);
  if (kind === 'timeout') return new APITimeoutError(withCauses('The response timed out', error, secrets), cause);
  if (kind === 'connection') return new APIConnectionError(withCauses('The connection broke before the response was complete', error, secrets), cause);
  return new ChatProviderError(`Anthropic error: ${message}`, cause);
}

/**
 * The class names of an error's prototype chain below `Error`. Names, not `instanceof`: an error of
 * a client from another copy of the SDK must map the same.
 */
function classNames(error: unknown): Set<string> {
  const names = new Set<string>();
  if (!(error instanceof Error)) return names;
  for (let proto: unknown = Object.getPrototypeOf(error); proto !== null && proto !== Error.prototype; proto = Object.getPrototypeOf(proto)) {
    const name = (proto as { constructor?: { name?: unknown } }).constructor?.name;
    if (typeof name === 'string') names.add(name);
  }
  return names;
}

/** `message (detail: detail…)`: the messages of `error` and its causes that `message` lacks. */
function withCauses(message: string, error: unknown, secrets: Secrets): string {
  const details = errorChainMessages(error, 3).filter((text) => !message.includes(text));
  return details.length === 0 ? message : `${message} (${redactSecrets(details.join(': '), secrets)})`;
}

function isHeaders(value: unknown): value is Headers {
  return typeof value === 'object' && value !== null && typeof (value as { get?: unknown }).get === 'function';
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
