import { ChatProviderError, feedEveryLineEnd } from '@kosong/core';
import { createParser, type EventSourceMessage, type ParseError } from 'eventsource-parser';


/** Longest run of stream data without a line end that is buffered before giving up (characters). */
const MAX_PENDING_CHARS = 64 * 1024 * 1024;

/**
 * Decodes the body of a streamed Chat Completions (or Responses) response, as its bytes arrive, into
 * its chunk objects: server-sent events (`eventsource-parser`: comments, multi-line `data`, every
 * line end — CR, LF, CRLF — read as soon as it arrives, events split anywhere across reads), each
 * `data` parsed as JSON. It reads the stream as the `openai` SDK does: `data: [DONE]` ends it
 * (anything after is ignored). An event the body ends in the middle of is dropped. What a chunk
 * means (an `error` chunk, say) is for the converter `onChunk` feeds.
 */
export class ChunkEventDecoder {
  readonly #text = new TextDecoder();
  readonly #feed: (text: string) => void;
  #events = 0;
  #done = false;
  #overflow = false;

  /**
   * @param onChunk called with each chunk, in order, from within {@link ChunkEventDecoder.feed}; what it throws, `feed` throws.
   * @param maxPendingChars the longest run of data without a line end it buffers (default 64 Mi characters).
   */
  constructor(
    private readonly onChunk: (chunk: unknown) => void,
    private readonly maxPendingChars = MAX_PENDING_CHARS,
  ) {
    const parser = createParser({
      onEvent: (event) => this.#event(event),
      onError: (error: ParseError) => {
        if (error.type === 'max-buffer-size-exceeded') this.#overflow = true;
      },
      maxBufferSize: maxPendingChars,
    });
    this.#feed = feedEveryLineEnd(parser);
  }

  /** How many events arrived (`[DONE]` and events after it included). */
  get events(): number {
    return this.#events;
  }

  /** Whether `data: [DONE]` arrived. */
  get done(): boolean {
    return this.#done;
  }

  /**
   * Decodes the next bytes of the body, calling `onChunk` for each complete event.
   *
   * @throws {SyntaxError} for an event whose data is not JSON; what `onChunk` throws; a
   * {@link ChatProviderError} for more data without a line end than it buffers.
   */
  feed(bytes: Uint8Array): void {
    this.#feed(this.#text.decode(bytes, { stream: true }));
    if (this.#overflow) throw new ChatProviderError(`The server sent more than ${this.maxPendingChars} characters of stream data without a line end`);
  }

  #event(event: EventSourceMessage): void {
    this.#events++;
    if (this.#done) return;
    const data = event.data;
    if (data.startsWith('[DONE]')) {
      this.#done = true;
      return;
    }
    this.onChunk(JSON.parse(data) as unknown);
  }
}
