import { APIConnectionError, APITimeoutError, ChatProviderError, headersOf, httpStatusError, sdkErrorConverter, type Secrets } from '@kosong/core/provider-kit';

/** What {@link convertError} needs to know besides the error. */
export interface ErrorConversionContext {
  /** Secrets (API keys) that must not be reachable from the converted error; they are redacted. */
  readonly secrets: Secrets;
}

/** The `openai` SDK's errors, by class name (an error of another copy of the SDK maps the same). */
const convert = sdkErrorConverter({
  sdkError: (error, { message, cause, classes, withCauses, redact }) => {
    if (!classes.has('APIError')) return undefined;
    const sdk = error as { status?: unknown; headers?: unknown; error?: unknown };
    if (typeof sdk.status === 'number') {
      const headers = headersOf(sdk.headers);
      return httpStatusError(sdk.status, message, { headers, requestId: headers?.get('x-request-id') ?? undefined, traceId: headers?.get('x-trace-id') ?? undefined, cause, redact });
    }
    if (classes.has('APIConnectionTimeoutError')) return new APITimeoutError(message, { cause });
    if (classes.has('APIUserAbortError')) return new APIConnectionError(message, { cause });
    if (classes.has('APIConnectionError')) return new APIConnectionError(withCauses(message, (error as Error).cause), { cause });
    // the bare APIError without a body is a transport failure: the Python heuristic
    if ((error as Error).constructor.name === 'APIError' && sdk.error === undefined) {
      if (/timed?\s*out|timeout|deadline/i.test(message)) return new APITimeoutError(message, { cause });
      if (/network|connection|connect|disconnect/i.test(message)) return new APIConnectionError(message, { cause });
    }
    return new ChatProviderError(`Error: ${message}`, { cause });
  },
});

/**
 * Maps an error of the `openai` SDK, of `fetch` or of the stream to the kosong provider errors
 * (kosong spec §2.6, §7.1), on the kit's `sdkErrorConverter`. Every message has the secrets
 * redacted, and the original error is kept as `cause` with no secret reachable from it.
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
  return convert(error, context.secrets);
}
