/**
 * Errors of a fallback provider. Both are of the `ChatProviderError` family: they carry its marker, so
 * `ChatProviderError.isInstance(e)` is true for them, and each has a marker and an `isInstance` of its own.
 *
 * @module
 */

import { isRetryableError } from '@kosong/core';
import {
  APIConnectionError,
  APIEmptyResponseError,
  APIStatusError,
  APITimeoutError,
  ChatProviderError,
  errorMarker,
  hasErrorMarker,
  markError,
} from '@kosong/core/provider-kit';

import { modelLabel, type ModelRef } from './model-ref.js';

const CHAT_PROVIDER_ERROR = errorMarker('ChatProviderError');
const CIRCUIT_OPEN_ERROR = errorMarker('CircuitOpenError');
const ALL_MODELS_FAILED_ERROR = errorMarker('AllModelsFailedError');

/**
 * Why a breaker let no call through: `open` (cooling down), `half-open` (a trial call is running),
 * `isolated` (held open by hand), `retry-after` (the model's last failure asked to be left alone
 * until a time, with a `retry-after`, and a later model of the chain can be asked meanwhile).
 */
export type BreakerRefusal = 'open' | 'half-open' | 'isolated' | 'retry-after';

/**
 * A model was skipped without a request: its circuit breaker is open. Not retryable by itself (the
 * agent loop's waits are shorter than a cool-down); it is what an {@link AllModelsFailedError} holds
 * for a model that was skipped.
 */
export class CircuitOpenError extends ChatProviderError {
  /** The model skipped. */
  readonly model: ModelRef;
  /** Why its breaker let no call through. */
  readonly breaker: BreakerRefusal;
  /**
   * When the model is asked again (epoch ms): for `open`, when the breaker lets a trial call through;
   * for `retry-after`, when the model's `retry-after` runs out. `undefined` otherwise.
   */
  readonly halfOpensAt: number | undefined;

  constructor(model: ModelRef, breaker: BreakerRefusal, halfOpensAt?: number) {
    super(`${modelLabel(model)} was skipped: ${refusalText(breaker, halfOpensAt)}`);
    this.model = model;
    this.breaker = breaker;
    this.halfOpensAt = breaker === 'open' || breaker === 'retry-after' ? halfOpensAt : undefined;
    markError(this, CIRCUIT_OPEN_ERROR);
  }

  /** Whether `error` is a {@link CircuitOpenError} (of any copy of this package). */
  static override isInstance(error: unknown): error is CircuitOpenError {
    return hasErrorMarker(error, CIRCUIT_OPEN_ERROR);
  }
}

function refusalText(breaker: BreakerRefusal, halfOpensAt: number | undefined): string {
  switch (breaker) {
    case 'open':
      return halfOpensAt === undefined ? 'its circuit breaker is open' : `its circuit breaker is open until ${new Date(halfOpensAt).toISOString()}`;
    case 'half-open':
      return 'its circuit breaker is half-open (a trial call is running)';
    case 'isolated':
      return 'its circuit breaker is held open';
    case 'retry-after':
      return `it asked to be retried after ${halfOpensAt === undefined ? 'a while' : new Date(halfOpensAt).toISOString()} (retry-after)`;
  }
}

/** One model's part in an {@link AllModelsFailedError}. */
export interface ModelFailure {
  readonly model: ModelRef;
  /** The model's error before its first part, or a {@link CircuitOpenError} when it was skipped. */
  readonly error: unknown;
}

/** How much of each model's message goes into the aggregate's message. */
const MESSAGE_CHARS = 300;

/**
 * Every model of the chain failed before its first part (or was skipped by its breaker): one error
 * carrying each model's, in chain order (`errors`, and `failures` with the models). Its `cause` is the
 * last model's error.
 *
 * It is retryable only if the last model's error is: besides the `ChatProviderError` marker, it carries
 * the marker of the last error's kind (`APIStatusError`, `APIConnectionError`, `APITimeoutError` or
 * `APIEmptyResponseError`; for a status error also its `statusCode`, `retryAfterSeconds`, `requestId`
 * and `traceId`), so that whatever handles provider errors by kind — core's `isRetryableError` and
 * `retryDelayMs` in the agent loop, a check for a 429 — handles it as it would the last model's error.
 * `instanceof` those classes is false: it is an `AggregateError`.
 */
export class AllModelsFailedError extends AggregateError {
  /** Each model with its error, in chain order. */
  readonly failures: readonly ModelFailure[];
  /** Whether the last model's error is retryable (core's `isRetryableError`), and so this one. */
  readonly retryable: boolean;
  /** The last error's HTTP status, when it is an `APIStatusError`. */
  readonly statusCode: number | undefined;
  /** The last error's `retry-after`, when it is an `APIStatusError` with one. */
  readonly retryAfterSeconds: number | undefined;
  /** The last error's request id, when it is an `APIStatusError` with one. */
  readonly requestId: string | undefined;
  /** The last error's trace id, when it is an `APIStatusError` with one. */
  readonly traceId: string | undefined;

  constructor(failures: readonly ModelFailure[]) {
    const last = failures.at(-1)?.error;
    const summary = failures.map((failure) => `[${failure.model.index}] ${modelLabel(failure.model)}: ${messageOf(failure.error)}`).join('; ');
    super(
      failures.map((failure) => failure.error),
      `Every model failed: ${summary}`,
      { cause: last },
    );
    this.name = 'AllModelsFailedError';
    this.failures = Object.freeze([...failures]);
    this.retryable = isRetryableError(last);
    const status = APIStatusError.isInstance(last) ? last : undefined;
    this.statusCode = status?.statusCode;
    this.retryAfterSeconds = status?.retryAfterSeconds;
    this.requestId = status?.requestId;
    this.traceId = status?.traceId;
    markError(this, CHAT_PROVIDER_ERROR);
    markError(this, ALL_MODELS_FAILED_ERROR);
    const kind = KINDS.find((candidate) => candidate.isInstance(last));
    if (kind !== undefined) markError(this, errorMarker(kind.name));
  }

  /** Whether `error` is an {@link AllModelsFailedError} (of any copy of this package). */
  static isInstance(error: unknown): error is AllModelsFailedError {
    return hasErrorMarker(error, ALL_MODELS_FAILED_ERROR);
  }
}

/** The kinds whose marker the aggregate takes from its last error (the ones core's retry policy reads). */
const KINDS: readonly { readonly name: string; isInstance(error: unknown): boolean }[] = [APIStatusError, APIConnectionError, APITimeoutError, APIEmptyResponseError];

function messageOf(error: unknown): string {
  let text: string;
  try {
    text = error instanceof Error || (typeof error === 'object' && error !== null && typeof (error as { message?: unknown }).message === 'string')
      ? String((error as { message: string }).message)
      : String(error);
  } catch {
    text = Object.prototype.toString.call(error);
  }
  return text.length > MESSAGE_CHARS ? `${text.slice(0, MESSAGE_CHARS)}…` : text;
}
