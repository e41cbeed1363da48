import { APIConnectionError, APIStatusError, APITimeoutError, ChatProviderError, errorChainMessages, redirectRefusal, retryAfterSeconds, scrubSecrets, transportFailureKind } from '@kosong/core';

import { containsSecret, redact } from './redact.js';
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
  const text = redirectRefusal(response.status, response.headers) ?? (detail === '' ? head : `${head}: ${detail}`);
  return new APIStatusError(response.status, redact(text, secrets), {
    requestId: header(response.headers, 'x-request-id', secrets),
    traceId: header(response.headers, 'x-trace-id', secrets),
    retryAfterSeconds: retryAfterSeconds(response.headers) ?? retryDelaySeconds(error),
  });
}

/**
 * Maps any other failure of a request or of its stream to the kosong provider errors (spec §2.6):
 * `fetch` and socket timeouts → {@link APITimeoutError}; refused, reset or cut connections (`fetch
 * failed`, `terminated`, socket error codes) → {@link APIConnectionError}; an SDK `ApiError` (a
 * status the provider did not capture) → {@link APIStatusError}; anything else →
 * {@link ChatProviderError} `Error: …`. A {@link ChatProviderError} is returned as it is (rebuilt
 * when a secret slipped into its message). Secrets are redacted from messages, and the original
 * error is kept as `cause` scrubbed of them (core's `scrubSecrets`).
 */
export function convertError(error: unknown, secrets: readonly (string | undefined)[]): ChatProviderError {
  if (ChatProviderError.isInstance(error)) {
    if (!containsSecret(error.message, secrets)) return error;
    if (!APIStatusError.isInstance(error)) return new ChatProviderError(redact(error.message, secrets));
    const { requestId, traceId, retryAfterSeconds } = error;
    return new APIStatusError(error.statusCode, redact(error.message, secrets), { requestId, traceId, retryAfterSeconds });
  }
  const cause: ErrorOptions = { cause: scrubSecrets(error, secrets) };
  const message = redact(errorMessage(error), secrets);
  const status = (error as { status?: unknown } | null)?.status;
  if (error instanceof Error && error.name === 'ApiError' && typeof status === 'number') return new APIStatusError(status, message, cause);
  const kind = transportFailureKind(error);
  if (kind === 'timeout') return new APITimeoutError(`The response timed out (${redact(describeChain(error), secrets)})`, cause);
  if (kind === 'connection') return new APIConnectionError(`The connection broke before the response was complete (${redact(describeChain(error), secrets)})`, cause);
  return new ChatProviderError(`Error: ${message}`, cause);
}

/** A response header, redacted (a proxy may echo anything, credentials included, in any header). */
function header(headers: Headers, name: string, secrets: readonly (string | undefined)[]): string | undefined {
  const value = headers.get(name);
  return value === null ? undefined : redact(value, secrets);
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

/** The messages of an error and its causes, joined. */
function describeChain(error: unknown): string {
  return errorChainMessages(error).join(': ');
}

function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}
