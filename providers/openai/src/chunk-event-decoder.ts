import { ChatProviderError } from '@kosong/core';
import { createParser, type EventSourceMessage, type EventSourceParser, type ParseError } from 'eventsource-parser';
import { APIError } from 'openai';

/** Longest run of stream data without a line end that is buffered before giving up (characters). */
const MAX_PENDING_CHARS = 64 * 1024 * 1024;

/**
 * Decodes the body of a streamed Chat Completions response, as its bytes arrive, into its chunk
 * objects: server-sent events (`eventsource-parser`: comments, multi-line `data`, CRLF, events split
 * anywhere across reads), each `data` parsed as JSON. It reads the stream as the `openai` SDK does:
 * `data: [DONE]` ends it (anything after is ignored), and a chunk with an `error` member is the
 * SDK's own `APIError` (so errors map as before). An event the body ends in the middle of is dropped.
 */
export class ChunkEventDecoder {
  readonly #text = new TextDecoder();
  readonly #parser: EventSourceParser;
  #events = 0;
  #done = false;
  #overflow = false;

  /**
   * @param onChunk called with each chunk, in order, from within {@link ChunkEventDecoder.feed}; what it throws, `feed` throws.
   * @param headers the response headers, for the SDK error of an `error` chunk.
   * @param maxPendingChars the longest run of data without a line end it buffers (default 64 Mi characters).
   */
  constructor(
    private readonly onChunk: (chunk: unknown) => void,
    private readonly headers: Headers,
    private readonly maxPendingChars = MAX_PENDING_CHARS,
  ) {
    this.#parser = createParser({
      onEvent: (event) => this.#event(event),
      onError: (error: ParseError) => {
        if (error.type === 'max-buffer-size-exceeded') this.#overflow = true;
      },
      maxBufferSize: maxPendingChars,
    });
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
   * @throws {SyntaxError} for an event whose data is not JSON; the SDK's `APIError` for a chunk with
   * an `error`; a {@link ChatProviderError} for more data without a line end than it buffers.
   */
  feed(bytes: Uint8Array): void {
    this.#parser.feed(this.#text.decode(bytes, { stream: true }));
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
    const chunk = JSON.parse(data) as { error?: unknown } | null;
    if (chunk?.error) throw new APIError(undefined, chunk.error as object, undefined, this.headers);
    this.onChunk(chunk);
  }
}
