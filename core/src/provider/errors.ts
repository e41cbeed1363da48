/**
 * Errors a {@link ChatProvider} raises. Each class carries a marker under a global symbol and a
 * static `isInstance(e)` that checks it, so the check works across duplicated copies of this package
 * (where `instanceof` fails).
 *
 * @module
 */

import { errorMarker, hasErrorMarker as hasMarker, markError as mark } from '../error-marker.js';

const CHAT_PROVIDER_ERROR = errorMarker('ChatProviderError');
const API_CONNECTION_ERROR = errorMarker('APIConnectionError');
const API_TIMEOUT_ERROR = errorMarker('APITimeoutError');
const API_STATUS_ERROR = errorMarker('APIStatusError');
const API_EMPTY_RESPONSE_ERROR = errorMarker('APIEmptyResponseError');

/** Base of every provider error. */
export class ChatProviderError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    mark(this, CHAT_PROVIDER_ERROR);
  }

  /** Whether `error` is a {@link ChatProviderError} (of any copy of this package). */
  static isInstance(error: unknown): error is ChatProviderError {
    return hasMarker(error, CHAT_PROVIDER_ERROR);
  }
}

/** The connection to the provider failed or broke (refused, reset, closed mid-stream). Retryable. */
export class APIConnectionError extends ChatProviderError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    mark(this, API_CONNECTION_ERROR);
  }

  /** Whether `error` is an {@link APIConnectionError}. */
  static override isInstance(error: unknown): error is APIConnectionError {
    return hasMarker(error, API_CONNECTION_ERROR);
  }
}

/** The request timed out. Retryable. */
export class APITimeoutError extends ChatProviderError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    mark(this, API_TIMEOUT_ERROR);
  }

  /** Whether `error` is an {@link APITimeoutError}. */
  static override isInstance(error: unknown): error is APITimeoutError {
    return hasMarker(error, API_TIMEOUT_ERROR);
  }
}

/** Extra facts of an {@link APIStatusError}. */
export interface APIStatusErrorOptions extends ErrorOptions {
  /** The provider's request id (`x-request-id`), for support tickets. */
  readonly requestId?: string | undefined;
  /** The provider's trace id (`x-trace-id`). */
  readonly traceId?: string | undefined;
  /** Seconds to wait before retrying, from a `retry-after` header. */
  readonly retryAfterSeconds?: number | undefined;
}

/** The provider answered with a non-success HTTP status. */
export class APIStatusError extends ChatProviderError {
  readonly statusCode: number;
  readonly requestId: string | undefined;
  readonly traceId: string | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(statusCode: number, message: string, options: APIStatusErrorOptions = {}) {
    super(message, options);
    this.statusCode = statusCode;
    this.requestId = options.requestId;
    this.traceId = options.traceId;
    this.retryAfterSeconds = options.retryAfterSeconds;
    mark(this, API_STATUS_ERROR);
  }

  /** Whether `error` is an {@link APIStatusError}. */
  static override isInstance(error: unknown): error is APIStatusError {
    return hasMarker(error, API_STATUS_ERROR);
  }
}

/** The response had no usable content: nothing at all, or only thinking. Retryable. */
export class APIEmptyResponseError extends ChatProviderError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    mark(this, API_EMPTY_RESPONSE_ERROR);
  }

  /** Whether `error` is an {@link APIEmptyResponseError}. */
  static override isInstance(error: unknown): error is APIEmptyResponseError {
    return hasMarker(error, API_EMPTY_RESPONSE_ERROR);
  }
}
