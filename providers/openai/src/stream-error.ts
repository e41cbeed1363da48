import { APIStatusError, ChatProviderError } from '@kosong/core';

/**
 * The HTTP status of each error `code` of a failed response that means the same as a status would:
 * a `response.failed` or `error` event has no status of its own, so a rate limit or a server error
 * reported mid-stream is retried like the 429 or 500 it stands for.
 */
const STATUS_OF_ERROR_CODE: Readonly<Record<string, number>> = {
  rate_limit_exceeded: 429,
  server_error: 500,
  vector_store_timeout: 504,
};

/**
 * The error of a `response.failed` or `error` event of a Responses stream: an
 * {@link APIStatusError} with the status its code stands for (`rate_limit_exceeded` → 429,
 * `server_error` → 500, `vector_store_timeout` → 504), else a {@link ChatProviderError}; the
 * message names the event, the code and the server's message.
 */
export function responsesStreamError(event: 'response.failed' | 'error', code: unknown, message: unknown): ChatProviderError {
  const codeText = typeof code === 'string' && code !== '' ? code : undefined;
  const detail = typeof message === 'string' && message !== '' ? message : 'no message';
  const text = `The Responses stream sent ${event}${codeText === undefined ? '' : ` (${codeText})`}: ${detail}`;
  const status = codeText !== undefined && Object.hasOwn(STATUS_OF_ERROR_CODE, codeText) ? STATUS_OF_ERROR_CODE[codeText] : undefined;
  return status === undefined ? new ChatProviderError(text) : new APIStatusError(status, text);
}
