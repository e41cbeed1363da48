import { errorMarker, hasErrorMarker, markError } from '../error-marker.js';
import type { PendingApproval } from './pending-step.js';

const APPROVAL_PENDING_ERROR = errorMarker('ApprovalPendingError');
const NO_PENDING_APPROVAL_ERROR = errorMarker('NoPendingApprovalError');
const RESUME_CONFLICT_ERROR = errorMarker('ResumeConflictError');

/**
 * A context has a step whose calls wait for approval, so nothing else may be added to it: finish
 * that step first with `agent.resume({ decisions })` (deny the calls to drop them).
 */
export class ApprovalPendingError extends Error {
  constructor(
    /** The calls that wait. */
    readonly pending: readonly PendingApproval[],
  ) {
    const calls = pending.map((p) => `${p.toolCall.function.name} (${p.toolCall.id})`).join(', ');
    super(`A step waits for approval of ${pending.length === 1 ? 'a call' : `${pending.length} calls`}: ${calls}; resume it with agent.resume({ decisions }) first`);
    this.name = 'ApprovalPendingError';
    markError(this, APPROVAL_PENDING_ERROR);
  }

  /** Whether `error` is an {@link ApprovalPendingError}. */
  static isInstance(error: unknown): error is ApprovalPendingError {
    return hasErrorMarker(error, APPROVAL_PENDING_ERROR);
  }
}

/** `agent.resume()` was called, but no step waits for approval in the context (or the decisions name calls that do not wait). */
export class NoPendingApprovalError extends Error {
  constructor(message = 'No step waits for approval: there is nothing to resume') {
    super(message);
    this.name = 'NoPendingApprovalError';
    markError(this, NO_PENDING_APPROVAL_ERROR);
  }

  /** Whether `error` is a {@link NoPendingApprovalError}. */
  static isInstance(error: unknown): error is NoPendingApprovalError {
    return hasErrorMarker(error, NO_PENDING_APPROVAL_ERROR);
  }
}

/**
 * Another turn holds the context: a second `agent.resume()` (or `run()`) while one is in progress on
 * the same context — in this process, or, for a store shared between processes, in another. Thrown
 * before anything runs: no tool of the second call ran, and the context is as the first leaves it.
 */
export class ResumeConflictError extends Error {
  constructor(message = 'Another turn (a run or a resume) of this context is in progress; nothing was run') {
    super(message);
    this.name = 'ResumeConflictError';
    markError(this, RESUME_CONFLICT_ERROR);
  }

  /** Whether `error` is a {@link ResumeConflictError}. */
  static isInstance(error: unknown): error is ResumeConflictError {
    return hasErrorMarker(error, RESUME_CONFLICT_ERROR);
  }
}
