import { APIStatusError, httpStatusError, sdkErrorConverter, type ChatProviderError } from '@kosong/core/provider-kit';

import { GOOGLE_CREDENTIALS, redact } from './redact.js';
import { isObject } from './response-converter.js';

/** A non-success HTTP response, as the provider captured it (the body cut to a few KiB). */
export interface FailedResponse {
  readonly status: number;
  readonly statusText: string;
  readonly headers: Headers;
  readonly body: string;
}

const STATUS_PREFIX: Readonly<Record<number, string>> = { 401: 'Authentication failed', 403: 'Permission denied', 429: 'Rate limit exceeded' };

/**
 * The {@link APIStatusError} for a failed HTTP response (kosong spec §7.6 prefixes: `Authentication
 * failed`, `Permission denied`, `Rate limit exceeded`, `Server error`), with the message of Gemini's
 * JSON error body (`error.message`, `error.status`) or the start of any other body, the
 * `x-request-id` / `x-trace-id` headers, and the wait from a `retry-after` header or a
 * `google.rpc.RetryInfo` detail; a redirect that was not followed (see `sameOriginRedirects`) says
 * where it led and why. Secrets are redacted.
 */
export function statusError(response: FailedResponse, secrets: readonly (string | undefined)[]): APIStatusError {
  const error = parseErrorBody(response.body);
  const rpcStatus = typeof error?.['status'] === 'string' ? error['status'] : response.statusText;
  const detail = typeof error?.['message'] === 'string' ? error['message'] : firstWords(response.body);
  const prefix = STATUS_PREFIX[response.status] ?? (response.status >= 500 ? 'Server error' : 'HTTP error');
  const head = `${prefix} (${response.status}${rpcStatus ? ` ${rpcStatus}` : ''})`;
  const clean = (text: string): string => redact(text, secrets);
  return httpStatusError(response.status, clean(detail === '' ? head : `${head}: ${detail}`), {
    headers: response.headers,
    requestId: response.headers.get('x-request-id') ?? undefined,
    traceId: response.headers.get('x-trace-id') ?? undefined,
    retryAfterSeconds: retryDelaySeconds(error),
    redact: clean,
  });
}

/** The `@google/genai` SDK's own error: an `ApiError` with a status (one the provider did not capture). */
const convert = sdkErrorConverter({
  patterns: GOOGLE_CREDENTIALS,
  sdkError: (error, { message, cause }) => {
    const status = (error as { status?: unknown } | null)?.status;
    return error instanceof Error && error.name === 'ApiError' && typeof status === 'number' ? new APIStatusError(status, message, { cause }) : undefined;
  },
});

/**
 * Maps any other failure of a request or of its stream to the kosong provider errors (spec §2.6),
 * on the kit's `sdkErrorConverter`: `fetch` and socket timeouts → `APITimeoutError`; refused, reset
 * or cut connections (`fetch failed`, `terminated`, socket error codes) → `APIConnectionError`; an
 * SDK `ApiError` (a status the provider did not capture) → {@link APIStatusError}; anything else →
 * {@link ChatProviderError} `Error: …`. A {@link ChatProviderError} is returned as it is (a redacted
 * copy when a secret slipped into it). Secrets, and anything that looks like a Google API key or
 * access token, are redacted from messages, and the original error is kept as `cause` scrubbed of
 * them.
 */
export function convertError(error: unknown, secrets: readonly (string | undefined)[]): ChatProviderError {
  return convert(error, secrets);
}

function parseErrorBody(body: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(body);
    // Gemini sends `{ error: {…} }`; some proxies wrap it in an array
    const root = Array.isArray(parsed) ? (parsed[0] as unknown) : parsed;
    return isObject(root) && isObject(root['error']) ? root['error'] : undefined;
  } catch {
    return undefined;
  }
}

/** The `retryDelay` (e.g. `"30s"`, `"1.5s"`) of a `google.rpc.RetryInfo` detail. */
function retryDelaySeconds(error: Record<string, unknown> | undefined): number | undefined {
  const details = error?.['details'];
  if (!Array.isArray(details)) return undefined;
  for (const detail of details) {
    if (!isObject(detail) || typeof detail['@type'] !== 'string' || !detail['@type'].endsWith('google.rpc.RetryInfo')) continue;
    const match = typeof detail['retryDelay'] === 'string' ? /^(\d+(?:\.\d+)?)s$/.exec(detail['retryDelay']) : null;
    if (match) return Number(match[1]);
  }
  return undefined;
}

/** The start of a non-JSON body (an HTML error page, say), tags dropped, whitespace collapsed. */
function firstWords(body: string): string {
  const text = body.slice(0, 2_000).replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim();
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

