import { EventStream, parseEventData, SseJsonDecoder, type Secrets, type SseEvent } from '@kosong/core/provider-kit';
import { createParser } from 'eventsource-parser';

import { convertError, streamErrorEvent } from './convert-error.js';
import { EventConverter } from './event-converter.js';

/** What a {@link MessagesStream} needs besides the response. */
export interface MessagesStreamOptions {
  /** The `request-id` response header. */
  readonly requestId: string | undefined;
  /** The caller's signal: when it aborts, the stream throws its reason. */
  readonly signal: AbortSignal | undefined;
  /** Longest wait for the next chunk before the request is aborted with an `APITimeoutError`. */
  readonly idleTimeoutMs: number;
  /** Aborts the HTTP request (the idle timeout, and an early end of the iteration, use it). */
  readonly abortRequest: (reason: unknown) => void;
  /** Called once when the stream is done with, however it ended. */
  readonly release: () => void;
  readonly secrets: Secrets;
}

/**
 * A `StreamedMessage` over the server-sent events of one streamed Messages API response. The body
 * is read with the provider kit (`readEventStream` over an `SseJsonDecoder` with
 * `eventsource-parser`, the events turned into parts by an {@link EventConverter}), which costs about
 * half of what the SDK's own stream does. It can be iterated once.
 *
 * The message ends at `message_stop`: nothing after it is parsed (a second message in the same body
 * is not merged into the first, a stray `data: [DONE]` does not fail it) and the stream is over at
 * once; the rest of the body is dropped in the background, and the request closed if it goes on
 * (`dropRest`: a body that ends right after keeps its connection for the next request).
 * A `data: [DONE]` before `message_stop` ends the stream there, incomplete. Every SSE line end (CR,
 * LF, CRLF) is read as soon as it arrives. A refusal (finish reason `content_filter`) that came with
 * no content is an empty answer (core's generate does not take it for an empty response to retry).
 *
 * It throws the caller's abort reason when the signal aborts; an `APITimeoutError` when the server
 * stays silent for the idle timeout; an `APIConnectionError` when the connection breaks, or the body
 * ends before `message_stop`; the error of an `error` event (an `APIStatusError` with the status of
 * its type, e.g. 529 for `overloaded_error`); a `ChatProviderError` for malformed data. Stopping the
 * iteration early cancels the request.
 */
export class MessagesStream extends EventStream {
  /** The `request-id` response header, for support tickets. */
  readonly requestId: string | undefined;

  constructor(body: ReadableStream<Uint8Array>, options: MessagesStreamOptions) {
    const converter = new EventConverter((event) => streamErrorEvent(event, options.requestId, options.secrets));
    super(
      {
        body,
        signal: options.signal,
        idleTimeoutMs: options.idleTimeoutMs,
        abortRequest: options.abortRequest,
        release: options.release,
        convertError: (error) => convertError(error, options.secrets),
        what: 'An Anthropic message stream',
      },
      new SseJsonDecoder(converter, { createParser, parse: parseEvent }),
    );
    this.requestId = options.requestId;
  }
}

/** The JSON of one event. An `error` event whose data is not JSON still reads as an error event. */
function parseEvent(event: SseEvent): unknown {
  if (event.event !== 'error') return parseEventData(event);
  try {
    return JSON.parse(event.data) as unknown;
  } catch {
    return { type: 'error', error: { type: 'unknown_error', message: event.data.slice(0, 500) } };
  }
}
