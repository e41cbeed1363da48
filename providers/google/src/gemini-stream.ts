import { APIConnectionError, APITimeoutError, ChatProviderError, dropRest, feedEveryLineEnd, type FinishReason, IdleTimer, type StreamedMessage, type StreamedMessagePart, type TokenUsage } from '@kosong/core';
import { createParser, type EventSourceParser } from 'eventsource-parser';

import { convertError } from './convert-error.js';
import { redact } from './redact.js';
import { snippet, type ResponseConverter } from './response-converter.js';

/** The longest one server-sent event may be, in characters (a guard against a stream without end). */
export const MAX_EVENT_CHARS = 64 * 1024 * 1024;

/** What a {@link GeminiStream} needs besides the response. */
export interface GeminiStreamOptions {
  readonly converter: ResponseConverter;
  /** The caller's signal: when it aborts, the stream throws its reason. */
  readonly signal: AbortSignal | undefined;
  /** Longest wait for the next chunk of the body before the request is given up with an {@link APITimeoutError}. */
  readonly idleTimeoutMs: number;
  /** Aborts the HTTP request with a reason (the idle timeout uses it). */
  readonly abortRequest: (reason: unknown) => void;
  /** Called once when the stream is done with the request, however it ended. */
  readonly release: () => void;
  /** Secrets to redact from errors. */
  readonly secrets: readonly (string | undefined)[];
}

/**
 * A {@link StreamedMessage} over the body of one `streamGenerateContent?alt=sse` response. It reads
 * the body itself: the server-sent events are split by `eventsource-parser` (linear in the size of
 * the body, however the network cuts it), and each event's JSON goes to a {@link ResponseConverter}.
 * It can be iterated once.
 *
 * It throws the caller's abort reason when the signal aborts, an {@link APITimeoutError} when the
 * server stays silent for the idle timeout, an {@link APIConnectionError} when the connection breaks
 * or the body ends before a `finishReason`, and a {@link ChatProviderError} for data that is not a
 * Gemini response (see {@link ResponseConverter}). Stopping the iteration early cancels the request.
 *
 * Every SSE line end (CR, LF, CRLF) is read as soon as it arrives. A `data: [DONE]` (which Gemini
 * never sends, but OpenAI-style gateways in front of it do) ends the stream: nothing after it is
 * parsed (the rest of the body is dropped in the background, `dropRest`), and the response is
 * complete if a `finishReason` came before it.
 */
export class GeminiStream implements StreamedMessage {
  /** The `x-trace-id` response header, if the server sent one. */
  readonly traceId: string | undefined;
  #iterated = false;

  constructor(
    private readonly response: Response,
    private readonly options: GeminiStreamOptions,
  ) {
    const traceId = response.headers.get('x-trace-id');
    this.traceId = traceId === null ? undefined : redact(traceId, options.secrets);
  }

  /** The response id (`responseId`), once an event carried it. */
  get id(): string | undefined {
    return this.options.converter.id;
  }

  /** The token usage, once the server sent it. */
  get usage(): TokenUsage | undefined {
    return this.options.converter.usage;
  }

  /** Why the model stopped, once the server said. */
  get finishReason(): FinishReason | undefined {
    return this.options.converter.finishReason;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<StreamedMessagePart> {
    if (this.#iterated) throw new ChatProviderError('A Gemini stream can be read only once');
    this.#iterated = true;
    const { converter, signal, secrets } = this.options;
    const body = this.response.body;
    const timer = new IdleTimer(this.options.idleTimeoutMs, () =>
      this.options.abortRequest(new APITimeoutError(`The server sent nothing for ${this.options.idleTimeoutMs} ms (stream timeout)`)),
    );
    const reader = body?.getReader();
    const decoder = new TextDecoder();
    const events: string[] = [];
    let overflow: Error | undefined;
    /** Whether `data: [DONE]` came: nothing after it is read. */
    let done = false;
    const parser: EventSourceParser = createParser({
      onEvent: (event) => {
        if (done) return;
        if (event.data.startsWith('[DONE]')) done = true;
        else events.push(event.data);
      },
      onError: (error) => {
        if (error.type === 'max-buffer-size-exceeded') overflow = error;
      },
      maxBufferSize: MAX_EVENT_CHARS,
    });
    const feed = feedEveryLineEnd(parser);
    let finished = false;
    try {
      if (reader === undefined) throw new APIConnectionError('The response has no body');
      for (;;) {
        if (signal?.aborted) throw signal.reason;
        let next: Awaited<ReturnType<typeof reader.read>>;
        timer.waiting();
        try {
          next = await reader.read();
        } catch (error) {
          throw this.#failure(error, timer);
        } finally {
          timer.idle();
        }
        if (next.done) break;
        feed(decoder.decode(next.value, { stream: true }));
        if (overflow !== undefined) throw new ChatProviderError(`The server sent a stream event longer than ${MAX_EVENT_CHARS} characters`);
        if (events.length === 0) {
          if (done) break;
          continue;
        }
        const out: StreamedMessagePart[] = [];
        let failure: { readonly error: unknown } | undefined;
        try {
          for (const data of events) converter.push(parseEvent(data), out);
        } catch (error) {
          failure = { error }; // the parts of the events before it still go out first
        } finally {
          events.length = 0;
        }
        for (const part of out) yield part;
        if (failure !== undefined) throw failure.error;
        if (done) break;
      }
      finished = true;
      // The body can end quietly when the request was aborted: tell why it ended.
      if (signal?.aborted) throw signal.reason;
      if (timer.fired) throw this.#timeout();
      if (converter.finishReason === undefined) {
        throw new APIConnectionError('The stream ended before the response was complete (no finishReason was sent)');
      }
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      throw convertError(error, secrets);
    } finally {
      timer.stop();
      if (finished && done && reader !== undefined) {
        // nothing after [DONE] is parsed: the rest of the body is dropped in the background, the request closed if it goes on
        dropRest(reader, this.options.release);
      } else {
        if (!finished) await reader?.cancel().catch(() => undefined);
        this.options.release();
      }
    }
  }

  #failure(error: unknown, timer: IdleTimer): unknown {
    if (this.options.signal?.aborted) return this.options.signal.reason;
    if (timer.fired) return this.#timeout();
    return error;
  }

  #timeout(): APITimeoutError {
    return new APITimeoutError(`The server sent nothing for ${this.options.idleTimeoutMs} ms (stream timeout)`);
  }
}

function parseEvent(data: string): unknown {
  try {
    return JSON.parse(data) as unknown;
  } catch {
    throw new ChatProviderError(`The server sent malformed stream data (an event that is not JSON): ${snippet(data)}`);
  }
}
