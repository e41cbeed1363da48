import { APIConnectionError, APIStatusError, APITimeoutError, ChatProviderError, redactSecrets, redirectRefusal, scrubSecrets } from '@kosong/core';


/** What {@link convertError} needs to know besides the error. */
export interface ErrorConversionContext {
  /** Secrets (API keys) that must not be reachable from the converted error; they are redacted. */
  readonly secrets: readonly (string | null | undefined)[];
}

const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
const NETWORK_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'ECONNABORTED', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ENETDOWN']);

/**
 * Maps an error of the `openai` SDK, of `fetch` or of the SSE parser to the kosong provider errors
 * (kosong spec §2.6, §7.1). Every message has the secrets redacted, and the original error is kept
 * as `cause` with no secret reachable from it (core's `scrubSecrets`: a redacted copy where the SDK
 * error holds one anywhere, e.g. response headers echoing `Authorization`).
 *
 * - SDK status errors → {@link APIStatusError} with the status, `x-request-id`, `x-trace-id` and the
 *   wait from `retry-after-ms` / `retry-after` (seconds or an HTTP date); a redirect that was not
 *   followed (see `sameOriginRedirects`) says where it led and why;
 * - SDK timeouts, and `fetch` timeouts → {@link APITimeoutError};
 * - SDK connection errors, and a connection that breaks mid-stream (`fetch`'s `terminated`,
 *   socket errors) → {@link APIConnectionError};
 * - the SDK's bare `APIError` without a body (a transport failure) → by its message: timeout, else
 *   connection, else plain (the Python heuristic);
 * - malformed SSE data (not JSON) → {@link ChatProviderError} saying so;
 * - anything else, including an `error` object sent in the stream → {@link ChatProviderError} `Error: …`.
 *
 * A {@link ChatProviderError} is returned as it is, or as a redacted copy if a secret is reachable
 * from it. Aborts are not handled here: callers check their signal first and throw its reason.
 */
export function convertError(error: unknown, context: ErrorConversionContext): ChatProviderError {
  const clean = (text: string): string => redactSecrets(text, context.secrets);
  // one of ours, possibly quoting server data: kept unless a secret slipped into it
  if (ChatProviderError.isInstance(error)) return scrubSecrets(error, context.secrets);
  const cause: ErrorOptions = { cause: scrubSecrets(error, context.secrets) };
  const classes = sdkClassNames(error);
  const message = clean(errorMessage(error));

  if (classes.has('APIError')) {
    const sdk = error as { status?: unknown; headers?: unknown; error?: unknown };
    if (typeof sdk.status === 'number') {
      const headers = isHeaders(sdk.headers) ? sdk.headers : undefined;
      const refusal = redirectRefusal(sdk.status, headers);
      return new APIStatusError(sdk.status, refusal === undefined ? message : clean(refusal), {
        ...cause,
        requestId: headers?.get('x-request-id') ?? undefined,
        traceId: headers?.get('x-trace-id') ?? undefined,
        retryAfterSeconds: retryAfterSeconds(headers),
      });
    }
    if (classes.has('APIConnectionTimeoutError')) return new APITimeoutError(message, cause);
    if (classes.has('APIUserAbortError')) return new APIConnectionError(message, cause);
    if (classes.has('APIConnectionError')) return new APIConnectionError(withCauses(message, (error as Error).cause, clean), cause);
    if ((error as Error).constructor.name === 'APIError' && sdk.error === undefined) {
      if (/timed?\s*out|timeout|deadline/i.test(message)) return new APITimeoutError(message, cause);
      if (/network|connection|connect|disconnect/i.test(message)) return new APIConnectionError(message, cause);
    }
    return new ChatProviderError(`Error: ${message}`, cause);
  }
  if (error instanceof SyntaxError) {
    return new ChatProviderError(`The server sent malformed stream data (an event that is not JSON): ${message}`, cause);
  }
  const code = networkCode(error);
  if (code !== undefined && TIMEOUT_CODES.has(code)) {
    return new APITimeoutError(withCauses('The response timed out', error, clean), cause);
  }
  if (code !== undefined || (error instanceof TypeError && /terminated|fetch failed|network|socket/i.test(message))) {
    return new APIConnectionError(withCauses('The connection broke before the response was complete', error, clean), cause);
  }
  return new ChatProviderError(`Error: ${message}`, cause);
}

/**
 * Class names of the error's prototype chain, below `Error`: `instanceof` would fail for a client
 * from another copy of the `openai` package, so the names are checked.
 */
function sdkClassNames(error: unknown): Set<string> {
  const names = new Set<string>();
  if (!(error instanceof Error)) return names;
  for (let proto: unknown = Object.getPrototypeOf(error); proto !== null && proto !== Error.prototype; proto = Object.getPrototypeOf(proto)) {
    const name = (proto as { constructor?: { name?: unknown } }).constructor?.name;
    if (typeof name === 'string') names.add(name);
  }
  return names;
}

function retryAfterSeconds(headers: Headers | undefined): number | undefined {
  const ms = Number(headers?.get('retry-after-ms') ?? Number.NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms / 1000;
  const value = headers?.get('retry-after')?.trim();
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - Date.now()) / 1000);
}

/** `message (detail: detail…)`, with the messages of `error` and its causes that `message` lacks. */
function withCauses(message: string, error: unknown, clean: (text: string) => string): string {
  const details: string[] = [];
  let current = error;
  for (let depth = 0; depth < 3 && current !== undefined && current !== null; depth++) {
    const text = errorMessage(current);
    if (text !== '' && !message.includes(text) && !details.includes(text)) details.push(text);
    current = (current as { cause?: unknown }).cause;
  }
  return details.length === 0 ? message : `${message} (${clean(details.join(': '))})`;
}

function networkCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && (TIMEOUT_CODES.has(code) || NETWORK_CODES.has(code) || code.startsWith('UND_ERR_SOCKET'))) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  return safeJSON(error);
}

function safeJSON(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function isHeaders(value: unknown): value is Headers {
  return typeof value === 'object' && value !== null && typeof (value as { get?: unknown }).get === 'function';
}
