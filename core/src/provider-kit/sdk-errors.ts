/**
 * One skeleton for mapping an SDK's errors to the `ChatProviderError` family (kosong spec §2.6),
 * which each provider configures with what its SDK throws. What every provider shares is here: a
 * `ChatProviderError` kept as it is, malformed stream data, transport failures (timeouts and broken
 * connections by their error codes), the fallback, and secrets kept out of every message and cause.
 *
 * @module
 */

import { APIConnectionError, APIStatusError, APITimeoutError, ChatProviderError } from '../provider/errors.js';
import { redirectRefusal } from '../provider/same-origin-redirects.js';
import { redactSecrets, scrubSecrets, type SecretPatterns, type Secrets } from '../provider/secret-scrubbing.js';
import { errorChainMessages, retryAfterSeconds, transportFailureKind } from '../provider/transport-failures.js';

/** What {@link sdkErrorConverter} knows of an error when it asks the provider's {@link SdkErrorMapping.sdkError}. */
export interface SdkErrorFacts {
  /** The error's own message (its text, for a value that is no `Error`), redacted. */
  readonly message: string;
  /** The original error with no secret reachable from it (see `scrubSecrets`): the `cause` of the error to build. */
  readonly cause: unknown;
  /**
   * The class names of the error's prototype chain below `Error` (e.g. `APIConnectionTimeoutError`,
   * `APIConnectionError`, `APIError`): names, not `instanceof`, so that an error of another copy of
   * the SDK maps the same.
   */
  readonly classes: ReadonlySet<string>;
  /** Redacts the secrets (and the patterns) from a text. */
  readonly redact: (text: string) => string;
  /** `message (detail: detail…)`: with the messages down `error`'s cause chain that `message` lacks, redacted. */
  readonly withCauses: (message: string, error: unknown) => string;
}

/** How one SDK's errors map: the part of a provider's error conversion that is its own. */
export interface SdkErrorMapping {
  /**
   * Maps an error of the SDK: the `ChatProviderError` for one it knows (an HTTP status →
   * {@link httpStatusError}, its timeout class → `APITimeoutError`, its connection class →
   * `APIConnectionError`), `undefined` for any other, which goes on to the checks every provider
   * shares. Build messages from `facts.message` and `facts.redact`, and give `facts.cause` as cause.
   */
  readonly sdkError?: ((error: unknown, facts: SdkErrorFacts) => ChatProviderError | undefined) | undefined;
  /** The prefix of the message of an error nothing maps: `Error` (default), `Anthropic error`, … */
  readonly fallbackPrefix?: string | undefined;
  /** Credentials recognised by their form, redacted like the secrets (e.g. any Google API key). */
  readonly patterns?: SecretPatterns | undefined;
}

/** Maps any error of a request or of its stream to a `ChatProviderError`, with `secrets` kept out of it. */
export type SdkErrorConverter = (error: unknown, secrets: Secrets) => ChatProviderError;

/**
 * A converter from any failure of a request or of its stream to the `ChatProviderError` family:
 *
 * 1. a `ChatProviderError` is returned as it is, or as a redacted copy if a secret is reachable from it;
 * 2. the SDK's own errors, as `mapping.sdkError` maps them;
 * 3. a `SyntaxError` (a `JSON.parse` of stream data) → `ChatProviderError` `The server sent malformed stream data …`;
 * 4. a transport failure (`transportFailureKind`: socket and `fetch` error codes down the cause
 *    chain, `fetch`'s `terminated`) → `APITimeoutError` `The response timed out (…)` or
 *    `APIConnectionError` `The connection broke before the response was complete (…)`;
 * 5. anything else → `ChatProviderError` `<fallbackPrefix>: <message>`.
 *
 * No message holds a secret (as it is, URL-encoded, JSON-escaped, a `Bearer` token, a pattern's
 * match), and the original error is kept as `cause` with none reachable from it. Aborts are not
 * handled here: callers check their signal first and throw its reason.
 *
 * @example
 * export const convertError = sdkErrorConverter({
 *   fallbackPrefix: 'Acme error',
 *   sdkError: (error, { message, cause, classes, redact }) => {
 *     if (classes.has('AcmeTimeoutError')) return new APITimeoutError(message, { cause });
 *     const status = (error as { status?: unknown }).status;
 *     return typeof status === 'number' ? httpStatusError(status, message, { headers: (error as { headers?: Headers }).headers, cause, redact }) : undefined;
 *   },
 * });
 */
export function sdkErrorConverter(mapping: SdkErrorMapping = {}): SdkErrorConverter {
  const prefix = mapping.fallbackPrefix ?? 'Error';
  const patterns = mapping.patterns ?? [];
  return (error, secrets) => {
    // one of ours, possibly quoting server data: kept unless a secret slipped into it
    if (ChatProviderError.isInstance(error)) return scrubSecrets(error, secrets, patterns);
    const redact = (text: string): string => redactSecrets(text, secrets, patterns);
    const cause = scrubSecrets(error, secrets, patterns);
    const message = redact(messageOf(error));
    const withCauses = (text: string, of: unknown): string => messageWithCauses(text, of, redact);
    const mapped = mapping.sdkError?.(error, { message, cause, classes: errorClassNames(error), redact, withCauses });
    if (mapped !== undefined) return mapped;
    if (error instanceof SyntaxError) return new ChatProviderError(`The server sent malformed stream data (an event that is not JSON): ${message}`, { cause });
    const kind = transportFailureKind(error);
    if (kind === 'timeout') return new APITimeoutError(withCauses('The response timed out', error), { cause });
    if (kind === 'connection') return new APIConnectionError(withCauses('The connection broke before the response was complete', error), { cause });
    return new ChatProviderError(`${prefix}: ${message}`, { cause });
  };
}

/** What {@link httpStatusError} puts on the error besides the status and the message. */
export interface HttpStatusErrorDetails {
  /** The response headers: a redirect's `location`, and `retry-after-ms` / `retry-after`. */
  readonly headers?: Pick<Headers, 'get'> | undefined;
  /** The provider's request id (e.g. the `x-request-id` header). */
  readonly requestId?: string | undefined;
  /** The provider's trace id (e.g. the `x-trace-id` header). */
  readonly traceId?: string | undefined;
  /** Seconds to wait before a retry when the headers do not say (e.g. from the error body). */
  readonly retryAfterSeconds?: number | undefined;
  /** The original error, scrubbed (`SdkErrorFacts.cause`). */
  readonly cause?: unknown;
  /** Redacts the secrets from the texts it adds (the ids, a redirect's location); default none. */
  readonly redact?: ((text: string) => string) | undefined;
}

/**
 * The `APIStatusError` for an HTTP status: `message`, or, for a redirect that was not followed (see
 * `sameOriginRedirects`), where it led and why; the ids; the wait of `retry-after-ms` /
 * `retry-after` (seconds or an HTTP date), else `details.retryAfterSeconds`.
 */
export function httpStatusError(status: number, message: string, details: HttpStatusErrorDetails = {}): APIStatusError {
  const redact = details.redact ?? ((text: string): string => text);
  const refusal = redirectRefusal(status, details.headers);
  return new APIStatusError(status, refusal === undefined ? message : redact(refusal), {
    ...('cause' in details ? { cause: details.cause } : {}),
    requestId: details.requestId === undefined ? undefined : redact(details.requestId),
    traceId: details.traceId === undefined ? undefined : redact(details.traceId),
    retryAfterSeconds: retryAfterSeconds(details.headers) ?? details.retryAfterSeconds,
  });
}

/**
 * The class names of an error's prototype chain below `Error` (none for a value that is no `Error`).
 * Names, not `instanceof`: an error of a client from another copy of an SDK must map the same.
 */
export function errorClassNames(error: unknown): Set<string> {
  const names = new Set<string>();
  if (!(error instanceof Error)) return names;
  for (let proto: unknown = Object.getPrototypeOf(error); proto !== null && proto !== Error.prototype; proto = Object.getPrototypeOf(proto)) {
    const name = (proto as { constructor?: { name?: unknown } }).constructor?.name;
    if (typeof name === 'string') names.add(name);
  }
  return names;
}

/** `value` when it can be read as response headers (it has a `get`), else `undefined`: for the `headers` an SDK error carries. */
export function headersOf(value: unknown): Pick<Headers, 'get'> | undefined {
  return typeof value === 'object' && value !== null && typeof (value as { get?: unknown }).get === 'function' ? (value as Pick<Headers, 'get'>) : undefined;
}

function messageWithCauses(message: string, error: unknown, redact: (text: string) => string): string {
  const details = errorChainMessages(error, 3).filter((text) => !message.includes(text));
  return details.length === 0 ? message : `${message} (${redact(details.join(': '))})`;
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}
