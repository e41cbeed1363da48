/**
 * The read loop every streaming provider runs over a response body: bytes in, parts out, with the
 * idle timer, the caller's signal, one error conversion, and the request closed however it ends.
 *
 * @module
 */

import type { StreamedMessagePart } from '../message/parts.js';
import { dropRest } from '../provider/body-rest.js';
import type { FinishReason, StreamedMessage } from '../provider/chat-provider.js';
import { APIConnectionError, APITimeoutError, ChatProviderError } from '../provider/errors.js';
import { IdleTimer } from '../provider/idle-timer.js';
import type { TokenUsage } from '../provider/token-usage.js';

/** What a stream learns about its message as it is read; final once the stream is consumed. */
export interface StreamFacts {
  /** The provider's id of the message, once the stream carried it. */
  readonly id: string | undefined;
  /** The token usage, once the stream reported it. */
  readonly usage: TokenUsage | undefined;
  /** Why the model stopped, once the stream said. */
  readonly finishReason: FinishReason | undefined;
}

/**
 * Turns the bytes of a response body into parts: the wire format of one streaming API (see
 * `SseJsonDecoder` for server-sent events of JSON).
 */
export interface StreamDecoder extends StreamFacts {
  /** Whether the stream's end event came (`data: [DONE]`, `message_stop`, …): nothing after it is read. */
  readonly ended: boolean;
  /**
   * Decodes the next bytes, writing the parts they complete to `out`. A throw fails the stream; the
   * parts written before it are delivered first.
   */
  feed(bytes: Uint8Array, out: StreamedMessagePart[]): void;
  /**
   * The body ended, or its end event came: writes the parts held back to `out`.
   *
   * @throws when the response is incomplete (e.g. an `APIConnectionError`: the stream ended before
   * its end marker).
   */
  finish(out: StreamedMessagePart[]): void;
}

/** The response {@link readEventStream} reads, and what it does with the request. */
export interface EventStreamSource {
  /** The response body; none is an {@link APIConnectionError}. */
  readonly body: ReadableStream<Uint8Array> | null | undefined;
  /** The caller's signal: once it aborts, the stream throws its reason. */
  readonly signal: AbortSignal | undefined;
  /** Longest wait for the next bytes before the request is aborted and the stream throws an {@link APITimeoutError}. */
  readonly idleTimeoutMs: number;
  /** Aborts the HTTP request with a reason: on the idle timeout, and when the stream is left before its end. */
  readonly abortRequest: (reason: unknown) => void;
  /** Called once when the stream is done with the request, however it ended (after the rest of a body is dropped, see `dropRest`). */
  readonly release?: (() => void) | undefined;
  /**
   * Maps what failed — reading the body (a broken connection), decoding it (malformed data, an
   * error event), an incomplete response — to the error the stream throws (a `ChatProviderError`,
   * redacted: see `sdkErrorConverter`). Not called for an abort or the idle timeout.
   */
  readonly convertError: (error: unknown) => unknown;
}

/**
 * Reads a response body to its end with `decoder`, yielding its parts. One timer for the whole
 * stream ({@link IdleTimer}): only the time spent waiting for bytes counts, not the time the
 * consumer spends between parts.
 *
 * It throws the signal's reason once the signal aborts (checked before each read and each part);
 * an {@link APITimeoutError} after `idleTimeoutMs` without bytes (the request is aborted); what
 * `convertError` makes of a failed read, a throwing decoder, or an incomplete response (`finish`).
 *
 * The request: after a complete response whose end event came, the rest of the body is dropped in
 * the background (`dropRest`: a body that ends right after keeps its connection for the next
 * request) and the request closed if it goes on; a body read to its end needs nothing; any other
 * end — an error, an abort, the consumer leaving the loop early — aborts the request and cancels
 * the body. `release` is called once in every case.
 */
export async function* readEventStream(source: EventStreamSource, decoder: StreamDecoder): AsyncGenerator<StreamedMessagePart, void, undefined> {
  const { signal, idleTimeoutMs } = source;
  const timer = new IdleTimer(idleTimeoutMs, () => source.abortRequest(idleTimeout(idleTimeoutMs)));
  const fail = (error: unknown): unknown => {
    if (signal?.aborted) return signal.reason;
    if (timer.fired) return idleTimeout(idleTimeoutMs);
    return source.convertError(error);
  };
  const reader = source.body?.getReader();
  const out: StreamedMessagePart[] = [];
  /** How the loop ended: the body was read to its end, or the end event came. */
  let outcome: 'read' | 'ended' | undefined;
  let complete = false;
  try {
    if (reader === undefined) throw fail(new APIConnectionError('The response has no body'));
    for (;;) {
      if (signal?.aborted) throw signal.reason;
      let read: Awaited<ReturnType<typeof reader.read>>;
      timer.waiting();
      try {
        read = await reader.read();
      } catch (error) {
        throw fail(error);
      } finally {
        timer.idle();
      }
      if (read.done) {
        outcome = 'read';
        break;
      }
      let failure: { readonly error: unknown } | undefined;
      try {
        decoder.feed(read.value, out);
      } catch (error) {
        failure = { error: fail(error) };
      }
      // the parts of the data before a failing event come first
      for (let i = 0; i < out.length; i++) {
        if (signal?.aborted) throw signal.reason;
        yield out[i]!;
      }
      out.length = 0;
      if (failure !== undefined) throw failure.error;
      if (decoder.ended) {
        outcome = 'ended';
        break;
      }
    }
    // the body can end quietly when the request was aborted: tell why it ended
    if (signal?.aborted) throw signal.reason;
    if (timer.fired) throw idleTimeout(idleTimeoutMs);
    try {
      decoder.finish(out);
    } catch (error) {
      throw fail(error);
    }
    complete = true;
    for (const part of out) {
      if (signal?.aborted) throw signal.reason;
      yield part;
    }
  } finally {
    timer.stop();
    if (complete && outcome === 'ended') {
      // nothing after the end event is parsed: the rest of the body is dropped in the background, the request closed if it goes on
      dropRest(reader!, () => {
        source.abortRequest(new ChatProviderError('The stream was complete'));
        source.release?.();
      });
    } else {
      if (outcome !== 'read') {
        source.abortRequest(new ChatProviderError('The stream was not read to its end'));
        reader?.cancel().catch(() => undefined);
      }
      source.release?.();
    }
  }
}

/** What an {@link EventStream} reads, and how it names itself. */
export interface EventStreamOptions extends EventStreamSource {
  /** The stream, for the error of a second iteration: `A Gemini stream` (`… can be read only once`). */
  readonly what: string;
  /** The provider's trace id of the response (e.g. the `x-trace-id` header), if any. */
  readonly traceId?: string | undefined;
}

/**
 * A {@link StreamedMessage} over one response body, read by {@link readEventStream} with a
 * {@link StreamDecoder}; its `id`, `usage` and `finishReason` are the decoder's. It can be iterated
 * once: a second iteration throws a `ChatProviderError`. A provider's stream class extends it to add
 * what its API tells (a request id, say).
 */
export class EventStream implements StreamedMessage {
  /** The provider's trace id of the response, if any. */
  readonly traceId: string | undefined;
  readonly #source: EventStreamSource;
  readonly #decoder: StreamDecoder;
  readonly #what: string;
  #iterated = false;

  constructor(options: EventStreamOptions, decoder: StreamDecoder) {
    this.#source = options;
    this.#decoder = decoder;
    this.#what = options.what;
    this.traceId = options.traceId;
  }

  /** The message id, once the stream carried it. */
  get id(): string | undefined {
    return this.#decoder.id;
  }

  /** The token usage, once the stream reported it. */
  get usage(): TokenUsage | undefined {
    return this.#decoder.usage;
  }

  /** Why the model stopped, once the stream said. */
  get finishReason(): FinishReason | undefined {
    return this.#decoder.finishReason;
  }

  /** Reads the body (see {@link readEventStream}); a second iteration fails with a `ChatProviderError`. */
  [Symbol.asyncIterator](): AsyncIterator<StreamedMessagePart> {
    if (this.#iterated) return failing(new ChatProviderError(`${this.#what} can be read only once`));
    this.#iterated = true;
    return readEventStream(this.#source, this.#decoder);
  }
}

function idleTimeout(ms: number): APITimeoutError {
  return new APITimeoutError(`The server sent nothing for ${ms} ms (stream timeout)`);
}

// eslint-disable-next-line require-yield
async function* failing(error: unknown): AsyncGenerator<never, void, undefined> {
  throw error;
}
