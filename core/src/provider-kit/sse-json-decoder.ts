/**
 * Server-sent events of JSON, the wire format of most streaming LLM APIs: a {@link StreamDecoder}
 * that splits a body into events with an SSE parser and hands each event's JSON to a provider's
 * {@link StreamEventConverter}.
 *
 * @module
 */

import type { StreamedMessagePart } from '../message/parts.js';
import { ChatProviderError } from '../provider/errors.js';
import { feedEveryLineEnd, type SseFeed } from '../provider/sse-line-ends.js';
import type { StreamDecoder, StreamFacts } from './event-stream.js';

/** The longest run of stream data without a line end that is buffered before the stream fails (characters). */
export const MAX_EVENT_CHARS = 64 * 1024 * 1024;

/** One server-sent event, as an SSE parser gives it. */
export interface SseEvent {
  /** The `event:` field, if the event had one. */
  readonly event?: string | undefined;
  /** The `data:` lines, joined with line ends. */
  readonly data: string;
}

/** What {@link SseJsonDecoder} hands an SSE parser. */
export interface SseParserConfig {
  /** Called with each complete event, from within `feed`. */
  readonly onEvent: (event: SseEvent) => void;
  /** Called when the parser gives up on the data (`max-buffer-size-exceeded`, …). */
  readonly onError: (error: { readonly type: string }) => void;
  /** The longest run of data without a line end the parser buffers (characters). */
  readonly maxBufferSize: number;
}

/**
 * Makes an SSE parser: `createParser` of `eventsource-parser` (3.x) has this shape. The provider
 * hands its own over, so core depends on no parser.
 */
export type CreateSseParser = (config: SseParserConfig) => SseFeed;

/**
 * A provider's wire mapping of a streaming API: turns the events of one response (their data,
 * parsed) into parts, and keeps what they say about the message.
 */
export interface StreamEventConverter extends StreamFacts {
  /** Whether the response is complete with nothing more to come (e.g. `message_stop`): nothing after it is read. Left out: never. */
  readonly complete?: boolean | undefined;
  /**
   * Reads one event; writes the parts it completes to `out`.
   *
   * @throws for an error event, or data that is not this API's (a `ChatProviderError` saying so).
   */
  push(event: unknown, out: StreamedMessagePart[]): void;
  /**
   * The events are over (the body ended, or the end event came): writes what was held back to `out`.
   *
   * @throws when the response is incomplete, e.g. an `APIConnectionError` for a stream that ended before its end marker.
   */
  end(out: StreamedMessagePart[]): void;
}

/** Options of an {@link SseJsonDecoder}. */
export interface SseJsonDecoderOptions {
  /** The SSE parser to split the body with: `createParser` of `eventsource-parser`. */
  readonly createParser: CreateSseParser;
  /** Reads an event's data; default {@link parseEventData} (JSON). */
  readonly parse?: ((event: SseEvent) => unknown) | undefined;
  /** The longest run of data without a line end it buffers, in characters; default {@link MAX_EVENT_CHARS}. */
  readonly maxEventChars?: number | undefined;
}

const NO_OUT: StreamedMessagePart[] = [];

/**
 * Decodes a body of server-sent events, as its bytes arrive: the SSE parser splits it (comments,
 * multi-line `data`, events split anywhere across reads; every line end — CR, LF, CRLF — read as
 * soon as it arrives, see `feedEveryLineEnd`), each event's data is parsed (JSON) and pushed to the
 * converter. `data: [DONE]` ends the stream, as does a converter that is `complete`: events after
 * that are counted but not read. An event the body ends in the middle of is dropped.
 *
 * `feed` throws a `ChatProviderError` for data that is not JSON and for more data without a line
 * end than it buffers, and what the converter throws; `finish` is the converter's `end`.
 */
export class SseJsonDecoder implements StreamDecoder {
  readonly #converter: StreamEventConverter;
  readonly #parse: (event: SseEvent) => unknown;
  readonly #maxEventChars: number;
  readonly #text = new TextDecoder();
  readonly #feed: (text: string) => void;
  #out: StreamedMessagePart[] = NO_OUT;
  #events = 0;
  #done = false;
  #overflow = false;

  constructor(converter: StreamEventConverter, options: SseJsonDecoderOptions) {
    this.#converter = converter;
    this.#parse = options.parse ?? parseEventData;
    this.#maxEventChars = options.maxEventChars ?? MAX_EVENT_CHARS;
    const parser = options.createParser({
      onEvent: (event) => this.#event(event),
      onError: (error) => {
        if (error.type === 'max-buffer-size-exceeded') this.#overflow = true;
      },
      maxBufferSize: this.#maxEventChars,
    });
    this.#feed = feedEveryLineEnd(parser);
  }

  /** The converter's message id. */
  get id(): string | undefined {
    return this.#converter.id;
  }

  /** The converter's usage. */
  get usage(): StreamFacts['usage'] {
    return this.#converter.usage;
  }

  /** The converter's finish reason. */
  get finishReason(): StreamFacts['finishReason'] {
    return this.#converter.finishReason;
  }

  /** How many events arrived (`[DONE]` and events after the end included). */
  get events(): number {
    return this.#events;
  }

  /** Whether `data: [DONE]` arrived. */
  get done(): boolean {
    return this.#done;
  }

  /** Whether the stream is over: `data: [DONE]` arrived, or the converter is complete. */
  get ended(): boolean {
    return this.#done || this.#converter.complete === true;
  }

  /**
   * Decodes the next bytes, pushing each complete event to the converter, which writes its parts to `out`.
   *
   * @throws {ChatProviderError} for an event that is not JSON, or more data without a line end than
   * it buffers; what the converter throws.
   */
  feed(bytes: Uint8Array, out: StreamedMessagePart[]): void {
    this.#out = out;
    try {
      this.#feed(this.#text.decode(bytes, { stream: true }));
    } finally {
      this.#out = NO_OUT;
    }
    if (this.#overflow) throw new ChatProviderError(`The server sent more than ${this.#maxEventChars} characters of stream data without a line end`);
  }

  /** The events are over: the converter's `end` (which throws for an incomplete response). */
  finish(out: StreamedMessagePart[]): void {
    this.#converter.end(out);
  }

  #event(event: SseEvent): void {
    this.#events++;
    if (this.ended) return;
    if (event.data.startsWith('[DONE]')) {
      this.#done = true;
      return;
    }
    this.#converter.push(this.#parse(event), this.#out);
  }
}

/**
 * An event's data as JSON.
 *
 * @throws {ChatProviderError} `The server sent malformed stream data (an event that is not JSON): …`
 * with the start of the data.
 */
export function parseEventData(event: SseEvent): unknown {
  try {
    return JSON.parse(event.data) as unknown;
  } catch {
    const data = event.data.length > 200 ? `${event.data.slice(0, 200)}…` : event.data;
    throw new ChatProviderError(`The server sent malformed stream data (an event that is not JSON): ${data}`);
  }
}
