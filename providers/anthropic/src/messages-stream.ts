import { APIConnectionError, APITimeoutError, ChatProviderError, dropRest, feedEveryLineEnd, type FinishReason, IdleTimer, type Secrets, type StreamedMessage, type StreamedMessagePart, type TokenUsage } from '@kosong/core';
import { createParser, type EventSourceMessage, type ParseError } from 'eventsource-parser';

import { convertError, streamErrorEvent } from './convert-error.js';
import { EventConverter } from './event-converter.js';

/** Longest run of stream data without a line end that is buffered before giving up (characters). */
const MAX_EVENT_CHARS = 64 * 1024 * 1024;

/** What a {@link MessagesStream} needs besides the response. */
export interface MessagesStreamOptions {
  /** The `request-id` response header. */
  readonly requestId: string | undefined;
  /** The caller's signal: when it aborts, the stream throws its reason. */
  readonly signal: AbortSignal | undefined;
  /** Longest wait for the next chunk before the request is aborted with an {@link APITimeoutError}. */
  readonly idleTimeoutMs: number;
  /** Aborts the HTTP request (the idle timeout, and an early end of the iteration, use it). */
  readonly abortRequest: (reason: unknown) => void;
  /** Called once when the stream is done with, however it ended. */
  readonly release: () => void;
  readonly secrets: Secrets;
}

/**
 * A {@link StreamedMessage} over the server-sent events of one streamed Messages API response. The
 * body is read and parsed here (`eventsource-parser`, then `JSON.parse` per event), which costs
 * about half of what the SDK's own stream does. It can be iterated once.
 *
 * The message ends at `message_stop`: nothing after it is parsed (a second message in the same body
 * is not merged into the first, a stray `data: [DONE]` does not fail it) and the stream is over at
 * once; the rest of the body is dropped in the background, and the request closed if it goes on
 * (`dropRest`: a body that ends right after keeps its connection for the next request).
 * A `data: [DONE]` before `message_stop` ends the stream there, incomplete. Every SSE line end (CR,
 * LF, CRLF) is read as soon as it arrives. A refusal (finish reason `content_filter`) that came with
 * no content is an empty answer (core's generate does not take it for an empty response to retry).
 *
 * It throws the caller's abort reason when the signal aborts; an {@link APITimeoutError} when the
 * server stays silent for the idle timeout; an {@link APIConnectionError} when the connection
 * breaks, or the body ends before `message_stop`; the error of an `error` event (an
 * `APIStatusError` with the status of its type, e.g. 529 for `overloaded_error`); a
 * {@link ChatProviderError} for malformed data. Stopping the iteration early cancels the request.
 */
export class MessagesStream implements StreamedMessage {
  /** The `request-id` response header, for support tickets. */
  readonly requestId: string | undefined;
  readonly #body: ReadableStream<Uint8Array>;
  readonly #options: MessagesStreamOptions;
  readonly #converter: EventConverter;
  #iterated = false;

  constructor(body: ReadableStream<Uint8Array>, options: MessagesStreamOptions) {
    this.#body = body;
    this.#options = options;
    this.requestId = options.requestId;
    this.#converter = new EventConverter((event) => streamErrorEvent(event, options.requestId, options.secrets));
  }

  /** The message id, once `message_start` came. */
  get id(): string | undefined {
    return this.#converter.id;
  }

  /** The token usage so far (final after the stream ended). */
  get usage(): TokenUsage | undefined {
    return this.#converter.usage;
  }

  /** Why the model stopped, once the server said. */
  get finishReason(): FinishReason | undefined {
    return this.#converter.finishReason;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<StreamedMessagePart> {
    if (this.#iterated) throw new ChatProviderError('An Anthropic message stream can be read only once');
    this.#iterated = true;
    const { signal, secrets } = this.#options;
    const converter = this.#converter;
    const out: StreamedMessagePart[] = [];
    let parseFailure: ChatProviderError | undefined;
    /** Whether `message_stop` (or a `data: [DONE]`) came: nothing after it is read. */
    let ended = false;
    const parser = createParser({
      onEvent: (event: EventSourceMessage) => {
        if (ended) return;
        if (event.data.startsWith('[DONE]')) {
          ended = true;
          return;
        }
        converter.push(parseEvent(event), out);
        ended = converter.complete;
      },
      onError: (error: ParseError) => {
        if (error.type === 'max-buffer-size-exceeded') parseFailure = new ChatProviderError(`The server sent more than ${MAX_EVENT_CHARS} characters without a line end`);
      },
      maxBufferSize: MAX_EVENT_CHARS,
    });
    const feed = feedEveryLineEnd(parser);
    const decoder = new TextDecoder();
    const reader = this.#body.getReader();
    const idle = new IdleTimer(this.#options.idleTimeoutMs, () => this.#options.abortRequest(this.#timeout()));
    let finished = false;
    try {
      for (;;) {
        if (signal?.aborted) throw signal.reason;
        let chunk: Awaited<ReturnType<typeof reader.read>>;
        idle.waiting();
        try {
          chunk = await reader.read();
        } catch (error) {
          throw this.#failure(error, idle);
        } finally {
          idle.idle();
        }
        if (chunk.done) break;
        let failure: ChatProviderError | undefined;
        try {
          feed(decoder.decode(chunk.value, { stream: true }));
        } catch (error) {
          failure = convertError(error, secrets);
        }
        // the parts that came before a failing event are delivered before the failure
        for (let i = 0; i < out.length; i++) yield out[i]!;
        out.length = 0;
        failure ??= parseFailure;
        if (failure !== undefined) throw failure;
        if (ended) break;
      }
      if (signal?.aborted) throw signal.reason;
      if (idle.fired) throw this.#timeout();
      if (!converter.complete) {
        throw new APIConnectionError('The stream ended before the response was complete (no message_stop event)');
      }
      finished = true;
    } finally {
      idle.stop();
      if (finished && ended) {
        // Nothing after message_stop is parsed: the rest of the body is dropped in the background, and the request closed if it goes on.
        dropRest(reader, () => this.#options.abortRequest(new ChatProviderError('The message was complete')));
      } else {
        if (!finished) this.#options.abortRequest(new ChatProviderError('The stream was not read to its end'));
        reader.releaseLock();
      }
      this.#options.release();
    }
  }

  #failure(error: unknown, idle: IdleTimer): unknown {
    const { signal } = this.#options;
    if (signal?.aborted) return signal.reason;
    if (idle.fired) return this.#timeout();
    return convertError(error, this.#options.secrets);
  }

  #timeout(): APITimeoutError {
    return new APITimeoutError(`The server sent nothing for ${this.#options.idleTimeoutMs} ms (stream timeout)`);
  }
}

/** The JSON of one event. An `error` event whose data is not JSON still reads as an error event. */
function parseEvent(event: EventSourceMessage): unknown {
  try {
    return JSON.parse(event.data) as unknown;
  } catch (error) {
    if (event.event === 'error') return { type: 'error', error: { type: 'unknown_error', message: event.data.slice(0, 500) } };
    throw error;
  }
}
