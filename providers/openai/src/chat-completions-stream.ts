import { APIConnectionError, APITimeoutError, ChatProviderError, dropRest, type FinishReason, IdleTimer, type StreamedMessage, type StreamedMessagePart, type TokenUsage } from '@kosong/core';

import { ChunkEventDecoder } from './chunk-event-decoder.js';
import { convertError } from './convert-error.js';
import { CHAT_COMPLETIONS_ENDPOINT, type StreamConverter, type StreamingEndpoint } from './streaming-endpoint.js';

/** What a {@link ChatCompletionsStream} needs besides the response body. */
export interface ChatCompletionsStreamOptions {
  readonly converter: StreamConverter;
  /** The API the response comes from (for messages). */
  readonly endpoint?: Pick<StreamingEndpoint, 'name' | 'endMarker'>;
  /** The response headers (`x-trace-id`; the SDK error of an `error` chunk carries them). */
  readonly headers: Headers;
  /** The caller's signal: when it aborts, the stream throws its reason. */
  readonly signal: AbortSignal | undefined;
  /** Longest wait for the next bytes before the request is aborted with an {@link APITimeoutError}. */
  readonly idleTimeoutMs: number;
  /** Aborts the HTTP request with a reason (the idle timeout, and an early end of the iteration, use it). */
  readonly abortRequest: (reason: unknown) => void;
  /** Secrets to redact from errors. */
  readonly secrets: () => readonly (string | null | undefined)[];
}

/**
 * A {@link StreamedMessage} over the body of one streamed Chat Completions response (or Responses
 * response, with that endpoint and a `ResponsesEventConverter`). The `openai`
 * SDK sends the request and maps its failures; the body of a successful response is read here
 * ({@link ChunkEventDecoder}: `eventsource-parser`, then `JSON.parse` per event), at a fraction of
 * what the SDK's own stream costs. It can be iterated once.
 *
 * It throws the caller's abort reason when the signal aborts, an {@link APITimeoutError} when the
 * server stays silent for the idle timeout, an {@link APIConnectionError} when the connection breaks
 * or the response ends without a `finish_reason` (its endpoint's end marker), and a {@link ChatProviderError} for malformed data,
 * an `error` chunk (an `APIStatusError` when its code stands for a status), or a body with no event
 * at all that was not declared an event stream. Stopping the iteration early cancels the HTTP
 * request. Nothing is parsed after `data: [DONE]` or a complete response (`response.completed`): the
 * stream is over there, even if the server keeps the connection open; the rest of the body is dropped
 * in the background and the request closed if it goes on (`dropRest`).
 */
export class ChatCompletionsStream implements StreamedMessage {
  readonly traceId: string | undefined;
  readonly #body: ReadableStream<Uint8Array>;
  readonly #options: ChatCompletionsStreamOptions;
  readonly #endpoint: Pick<StreamingEndpoint, 'name' | 'endMarker'>;
  #iterated = false;

  constructor(body: ReadableStream<Uint8Array>, options: ChatCompletionsStreamOptions) {
    this.#body = body;
    this.#options = options;
    this.#endpoint = options.endpoint ?? CHAT_COMPLETIONS_ENDPOINT;
    this.traceId = options.headers.get('x-trace-id') ?? undefined;
  }

  /** The message id, once a chunk carried it. */
  get id(): string | undefined {
    return this.#options.converter.id;
  }

  /** The token usage, once the server sent it (usually in the last chunk). */
  get usage(): TokenUsage | undefined {
    return this.#options.converter.usage;
  }

  /** Why the model stopped, once the server said. */
  get finishReason(): FinishReason | undefined {
    return this.#options.converter.finishReason;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<StreamedMessagePart> {
    if (this.#iterated) throw new ChatProviderError(`A ${this.#endpoint.name} stream can be read only once`);
    this.#iterated = true;
    const { converter, signal, headers } = this.#options;
    const out: StreamedMessagePart[] = [];
    converter.begin?.(headers);
    const decoder = new ChunkEventDecoder((chunk) => converter.push(chunk, out));
    const reader = this.#body.getReader();
    const timer = new IdleTimer(this.#options.idleTimeoutMs, () => this.#options.abortRequest(this.#timeout()));
    let finished = false;
    /** Whether the iteration stopped before the end of the body (at `[DONE]`, or a complete response). */
    let stopped = false;
    try {
      for (;;) {
        if (signal?.aborted) throw signal.reason;
        let read: Awaited<ReturnType<typeof reader.read>>;
        timer.waiting();
        try {
          read = await reader.read();
        } catch (error) {
          throw this.#failure(error, timer);
        } finally {
          timer.idle();
        }
        if (read.done) break;
        let failure: ChatProviderError | undefined;
        try {
          decoder.feed(read.value);
        } catch (error) {
          failure = convertError(error, { secrets: this.#options.secrets() });
        }
        // the parts of the chunks before a failing one come first
        for (let i = 0; i < out.length; i++) {
          if (signal?.aborted) throw signal.reason;
          yield out[i]!;
        }
        out.length = 0;
        if (failure !== undefined) throw failure;
        if (decoder.done || converter.complete === true) {
          stopped = true;
          break;
        }
      }
      if (signal?.aborted) throw signal.reason;
      if (timer.fired) throw this.#timeout();
      if (converter.finishReason === undefined) throw this.#incomplete(decoder);
      converter.end(out);
      finished = true;
      for (const part of out) yield part;
    } finally {
      timer.stop();
      if (finished && stopped) {
        // nothing after the end of the stream is parsed: the rest of the body is dropped in the background, the request closed if it goes on
        dropRest(reader, () => this.#options.abortRequest(new ChatProviderError('The stream was complete')));
      } else if (!finished) {
        this.#options.abortRequest(new ChatProviderError('The stream was not read to its end'));
        reader.cancel().catch(() => undefined);
      }
    }
  }

  /** The error for a body that ended without a finish reason. */
  #incomplete(decoder: ChunkEventDecoder): ChatProviderError {
    const contentType = this.#options.headers.get('content-type');
    if (decoder.events === 0 && contentType !== null && !/^\s*text\/event-stream\b/i.test(contentType)) {
      return new ChatProviderError(`The server answered with content type "${contentType}" and sent no event: it is not a ${this.#endpoint.name} event stream`);
    }
    return new APIConnectionError(`The stream ended before the response was complete (no ${this.#endpoint.endMarker} was sent)`);
  }

  #failure(error: unknown, timer: IdleTimer): unknown {
    const { signal } = this.#options;
    if (signal?.aborted) return signal.reason;
    if (timer.fired) return this.#timeout();
    return convertError(error, { secrets: this.#options.secrets() });
  }

  #timeout(): APITimeoutError {
    return new APITimeoutError(`The server sent nothing for ${this.#options.idleTimeoutMs} ms (stream timeout)`);
  }
}
