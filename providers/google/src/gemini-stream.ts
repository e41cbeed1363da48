import { EventStream, SseJsonDecoder } from '@kosong/core/provider-kit';
import { createParser } from 'eventsource-parser';

import { convertError } from './convert-error.js';
import { redact } from './redact.js';
import type { ResponseConverter } from './response-converter.js';

/** The longest one server-sent event may be, in characters (a guard against a stream without end). */
export { MAX_EVENT_CHARS } from '@kosong/core/provider-kit';

/** What a {@link GeminiStream} needs besides the response. */
export interface GeminiStreamOptions {
  readonly converter: ResponseConverter;
  /** The caller's signal: when it aborts, the stream throws its reason. */
  readonly signal: AbortSignal | undefined;
  /** Longest wait for the next chunk of the body before the request is given up with an `APITimeoutError`. */
  readonly idleTimeoutMs: number;
  /** Aborts the HTTP request with a reason (the idle timeout uses it). */
  readonly abortRequest: (reason: unknown) => void;
  /** Called once when the stream is done with the request, however it ended. */
  readonly release: () => void;
  /** Secrets to redact from errors. */
  readonly secrets: readonly (string | undefined)[];
}

/**
 * A `StreamedMessage` over the body of one `streamGenerateContent?alt=sse` response, read with the
 * provider kit (`readEventStream` over an `SseJsonDecoder` with `eventsource-parser`, linear in the
 * size of the body however the network cuts it); each event's JSON goes to a {@link ResponseConverter}.
 * It can be iterated once.
 *
 * It throws the caller's abort reason when the signal aborts, an `APITimeoutError` when the server
 * stays silent for the idle timeout, an `APIConnectionError` when the connection breaks or the body
 * ends before a `finishReason`, and a `ChatProviderError` for data that is not a Gemini response
 * (see {@link ResponseConverter}). Stopping the iteration early cancels the request.
 *
 * Every SSE line end (CR, LF, CRLF) is read as soon as it arrives. A `data: [DONE]` (which Gemini
 * never sends, but OpenAI-style gateways in front of it do) ends the stream: nothing after it is
 * parsed (the rest of the body is dropped in the background, `dropRest`), and the response is
 * complete if a `finishReason` came before it.
 */
export class GeminiStream extends EventStream {
  constructor(response: Response, options: GeminiStreamOptions) {
    const traceId = response.headers.get('x-trace-id');
    super(
      {
        body: response.body,
        signal: options.signal,
        idleTimeoutMs: options.idleTimeoutMs,
        abortRequest: options.abortRequest,
        release: options.release,
        convertError: (error) => convertError(error, options.secrets),
        what: 'A Gemini stream',
        traceId: traceId === null ? undefined : redact(traceId, options.secrets),
      },
      new SseJsonDecoder(options.converter, { createParser }),
    );
  }
}
