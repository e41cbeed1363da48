/**
 * Facts about failed HTTP requests that every provider needs when it maps errors to the
 * `ChatProviderError` family (kosong spec §2.6): whether a failure below HTTP was a timeout or a
 * broken connection, how long a response asks to wait before a retry, and the messages down an
 * error's cause chain.
 *
 * @module
 */

/** Error codes of Node's sockets and of undici (`fetch`) that mean a timeout. */
const TIMEOUT_CODES: ReadonlySet<string> = new Set(['ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
/** Error codes that mean the connection failed or broke. */
const CONNECTION_CODES: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
]);
/** What `fetch` says when the connection fails or breaks mid-body (a `TypeError` without a code of its own). */
const FETCH_BROKE = /terminated|fetch failed|network|socket/i;

/**
 * What kind of failure below HTTP `error` is, judged by the error codes down its cause chain (and
 * `fetch`'s `TypeError`s): `timeout` (connect, headers or body timeouts), `connection` (refused,
 * reset, unreachable, a body cut mid-way), or `undefined` for anything else.
 */
export function transportFailureKind(error: unknown): 'timeout' | 'connection' | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') {
      if (TIMEOUT_CODES.has(code)) return 'timeout';
      if (CONNECTION_CODES.has(code) || code.startsWith('UND_ERR_SOCKET')) return 'connection';
    }
    current = (current as { cause?: unknown }).cause;
  }
  return error instanceof TypeError && FETCH_BROKE.test(error.message) ? 'connection' : undefined;
}

/**
 * The seconds a response asks to wait before a retry: `retry-after-ms`, else `retry-after` in
 * seconds or as an HTTP date (a date in the past is 0); `undefined` without (valid) header.
 */
export function retryAfterSeconds(headers: Pick<Headers, 'get'> | null | undefined): number | undefined {
  const ms = Number(headers?.get('retry-after-ms') ?? Number.NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms / 1000;
  const value = headers?.get('retry-after')?.trim();
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - Date.now()) / 1000);
}

/**
 * The message of `error` and of each of its causes, at most `depth` of them, empty and repeated ones
 * left out: what a provider error says about a failure (`fetch failed: connect ECONNREFUSED …`).
 * A value that is no `Error` gives its text (a string as it is, anything else as JSON).
 */
export function errorChainMessages(error: unknown, depth = 4): string[] {
  const messages: string[] = [];
  let current: unknown = error;
  for (let level = 0; level < depth && current !== undefined && current !== null; level++) {
    const text = messageOf(current);
    if (text !== '' && !messages.includes(text)) messages.push(text);
    current = (current as { cause?: unknown }).cause;
  }
  return messages;
}

function messageOf(value: unknown): string {
  if (value instanceof Error) return value.message;
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
