/** Default time an async hook may take before it is reported as timed out. */
export const DEFAULT_HOOK_TIMEOUT_MS = 5_000;

/** Default time tools get to settle after being aborted before they are reported as leaked. */
export const DEFAULT_CLEANUP_TIMEOUT_MS = 5_000;

/** Failures of one hook within one step after which it is detached for the rest of the step. */
export const DEFAULT_MAX_HOOK_FAILURES = 3;
