import { APIConnectionError, APIStatusError, APITimeoutError, ChatProviderError, headersOf, httpStatusError, redactSecrets, sdkErrorConverter, type Secrets } from '@kosong/core/provider-kit';


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

/** The `@anthropic-ai/sdk` errors, by class name (an error of another copy of the SDK maps the same). */
const convert = sdkErrorConverter({
  fallbackPrefix: 'Anthropic error',
  sdkError: (error, { message, cause, classes, redact, withCauses }) => {
    if (!classes.has('APIError')) return undefined;
    const sdk = error as { status?: unknown; headers?: unknown; requestID?: unknown; type?: unknown; apiMessage?: unknown };
    if (typeof sdk.status === 'number') {
      const headers = headersOf(sdk.headers);
      const type = typeof sdk.type === 'string' ? sdk.type : undefined;
      const detail = typeof sdk.apiMessage === 'string' ? redact(sdk.apiMessage) : message;
      const requestId = (typeof sdk.requestID === 'string' ? sdk.requestID : undefined) ?? headers?.get('request-id') ?? undefined;
      return httpStatusError(sdk.status, `Anthropic API error ${sdk.status}${type === undefined ? '' : ` (${type})`}: ${detail}`, { headers, requestId, cause, redact });
    }
    // the SDK's timeout is a kind of its connection error: checked first
    if (classes.has('APIConnectionTimeoutError')) return new APITimeoutError(message, { cause });
    if (classes.has('APIConnectionError') || classes.has('APIUserAbortError')) return new APIConnectionError(withCauses(message, (error as Error).cause), { cause });
    return undefined;
  },
});

/**
 * Maps an error of the `@anthropic-ai/sdk` client, of `fetch` or of reading the stream to the kosong
 * provider errors (kosong spec §2.6, §7.5), on the kit's `sdkErrorConverter`:
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
 * reachable from it. Aborts are not handled here: callers check their signal first.
 */
export function convertError(error: unknown, secrets: Secrets): ChatProviderError {
  return convert(error, secrets);
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
