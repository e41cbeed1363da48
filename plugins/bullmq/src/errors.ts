import { errorMarker, hasErrorMarker, markError } from '@kosong/core/kernel';

const FENCED_ERROR = errorMarker('FencedError');
const TURN_FAILED_ERROR = errorMarker('TurnFailedError');
const TURN_CANCELLED_ERROR = errorMarker('TurnCancelledError');
const REDIS_UNAVAILABLE_ERROR = errorMarker('RedisUnavailableError');
const APPROVAL_SIGNATURE_ERROR = errorMarker('ApprovalSignatureError');

/**
 * A write to a session was refused because the writer's lease expired or another worker took the
 * session over (its fencing token is no longer the current one). Nothing of the write was stored.
 */
export class FencedError extends Error {
  constructor(
    readonly tenant: string | undefined,
    readonly session: string,
    readonly token: number,
  ) {
    super(`Session "${session}"${tenant === undefined ? '' : ` of tenant "${tenant}"`}: the lease (fencing token ${token}) expired or was taken over; nothing was written`);
    this.name = 'FencedError';
    markError(this, FENCED_ERROR);
  }

  /** Whether `error` is a {@link FencedError}. */
  static isInstance(error: unknown): error is FencedError {
    return hasErrorMarker(error, FENCED_ERROR);
  }
}

/**
 * A queued turn failed on its worker; `message` is the worker's error, `errorName` its class name.
 * For a typed error of core with fields — a `TimeoutBudgetError` (which budget ran out), a
 * `TenantLimitError`, a `TenantBudgetExceededError` — `cause` is that error again, with the fields
 * it had on the worker (check it with its `isInstance`).
 */
export class TurnFailedError extends Error {
  constructor(
    readonly turnId: string,
    message: string,
    readonly errorName: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'TurnFailedError';
    markError(this, TURN_FAILED_ERROR);
  }

  /** Whether `error` is a {@link TurnFailedError}. */
  static isInstance(error: unknown): error is TurnFailedError {
    return hasErrorMarker(error, TURN_FAILED_ERROR);
  }
}

/** A queued turn was cancelled (before it started, or while it ran). */
export class TurnCancelledError extends Error {
  constructor(
    readonly turnId: string,
    readonly reason: string,
  ) {
    super(`Turn ${turnId} was cancelled: ${reason}`);
    this.name = 'TurnCancelledError';
    markError(this, TURN_CANCELLED_ERROR);
  }

  /** Whether `error` is a {@link TurnCancelledError}. */
  static isInstance(error: unknown): error is TurnCancelledError {
    return hasErrorMarker(error, TURN_CANCELLED_ERROR);
  }
}

/** Redis could not be reached (or lost the turn's data) while following a turn. */
export class RedisUnavailableError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'RedisUnavailableError';
    markError(this, REDIS_UNAVAILABLE_ERROR);
  }

  /** Whether `error` is a {@link RedisUnavailableError}. */
  static isInstance(error: unknown): error is RedisUnavailableError {
    return hasErrorMarker(error, REDIS_UNAVAILABLE_ERROR);
  }
}

/**
 * An agent worker with an approval secret refused the decisions of a resumption: unsigned, not
 * signed with the secret, or signed for another tenant, session, step, resumption or call (see
 * `AgentWorkerOptions.approvalSecret`). Nothing of the step ran; its calls still wait for approval.
 * The submitter sees it as a `TurnFailedError` whose `errorName` is `ApprovalSignatureError`.
 */
export class ApprovalSignatureError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ApprovalSignatureError';
    markError(this, APPROVAL_SIGNATURE_ERROR);
  }

  /** Whether `error` is an {@link ApprovalSignatureError}. */
  static isInstance(error: unknown): error is ApprovalSignatureError {
    return hasErrorMarker(error, APPROVAL_SIGNATURE_ERROR);
  }
}
