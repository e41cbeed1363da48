import { ERROR_TYPE_OTHER } from './conventions.js';

/**
 * The `error.type` of a failed step: the error's `name` — a low-cardinality class name such as
 * `APIStatusError`, `APIConnectionError`, `APITimeoutError`, `APIEmptyResponseError` (kosong's
 * provider errors), `AbortError` or `TimeoutError` (an aborted signal's default reasons), or the name
 * of whatever the application threw or aborted with. A thrown value that is not an object with a
 * non-empty string `name` gives `_OTHER`.
 */
export function errorTypeOf(error: unknown): string {
  if (typeof error !== 'object' || error === null) return ERROR_TYPE_OTHER;
  try {
    const name = (error as { name?: unknown }).name;
    return typeof name === 'string' && name !== '' ? name : ERROR_TYPE_OTHER;
  } catch {
    return ERROR_TYPE_OTHER; // a throwing getter
  }
}

/** A short description of a thrown value, for a span status. Never throws. */
export function errorMessageOf(error: unknown): string {
  try {
    if (typeof error === 'object' && error !== null) {
      const message = (error as { message?: unknown }).message;
      if (typeof message === 'string' && message !== '') return message;
    }
    return String(error);
  } catch {
    return Object.prototype.toString.call(error);
  }
}
