import {
  APIConnectionError,
  APITimeoutError,
  ChatProviderError,
  type FinishReason,
  type StreamedMessage,
  type StreamedMessagePart,
  type TokenUsage,
} from '@kosong/core';

import type { ChunkConverter } from './chunk-converter.js';
import { convertError } from './convert-error.js';
import { IdleWatchdog } from './idle-watchdog.js';

/** What a {@link ChatCompletionsStream} needs besides its chunks. */
export interface ChatCompletionsStreamOptions {
  readonly converter: ChunkConverter;
  /** The `x-trace-id` response header. */
  readonly traceId: string | undefined;
  /** The caller's signal: when it aborts, the stream throws its reason. */
  readonly signal: AbortSignal | undefined;
  /** Longest wait for the next chunk before the request is aborted with an {@link APITimeoutError}. */
  readonly idleTimeoutMs: number;
  /** Aborts the HTTP request (the idle timeout uses it). */
  readonly abortRequest: () => void;
  /** Secrets to redact from errors. */
  readonly secrets: () => readonly (string | null | undefined)[];
}

/**
 * A {@link StreamedMessage} over the chunks of one streamed Chat Completions response (the `openai`
 * SDK's stream). It can be iterated once.
 *
 * It throws the caller's abort reason when the signal aborts, an {@link APITimeoutError} when the
 * server stays silent for the idle timeout, an {@link APIConnectionError} when the connection breaks
 * or the response ends without a `finish_reason`, and a {@link ChatProviderError} for malformed data.
 * Stopping the iteration early cancels the HTTP request.
 */
export class ChatCompletionsStream implements StreamedMessage {
  readonly traceId: string | undefined;
  #iterated = false;

  constructor(
    private readonly chunks: AsyncIterable<unknown>,
    private readonly options: ChatCompletionsStreamOptions,
  ) {
    this.traceId = options.traceId;
  }

  /** The message id, once a chunk carried it. */
  get id(): string | undefined {
    return this.options.converter.id;
  }

  /** The token usage, once the server sent it (usually in the last chunk). */
  get usage(): TokenUsage | undefined {
    return this.options.converter.usage;
  }

  /** Why the model stopped, once the server said. */
  get finishReason(): FinishReason | undefined {
    return this.options.converter.finishReason;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<StreamedMessagePart> {
    if (this.#iterated) throw new ChatProviderError('A Chat Completions stream can be read only once');
    this.#iterated = true;
    const { converter, signal } = this.options;
    const watchdog = new IdleWatchdog(this.options.idleTimeoutMs, this.options.abortRequest);
    const iterator = this.chunks[Symbol.asyncIterator]();
    let out: StreamedMessagePart[] = [];
    try {
      for (;;) {
        if (signal?.aborted) throw signal.reason;
        let next: IteratorResult<unknown>;
        watchdog.waiting();
        try {
          next = await iterator.next();
        } catch (error) {
          throw this.#failure(error, watchdog);
        } finally {
          watchdog.idle();
        }
        if (next.done) break;
        try {
          converter.push(next.value, out);
        } catch (error) {
          throw convertError(error, { secrets: this.options.secrets() });
        }
        if (out.length === 0) continue;
        const parts = out;
        out = [];
        for (const part of parts) yield part;
      }
      // The SDK ends its stream quietly when the request is aborted: tell why it ended.
      if (signal?.aborted) throw signal.reason;
      if (watchdog.fired) throw this.#timeout();
      if (converter.finishReason === undefined) {
        throw new APIConnectionError('The stream ended before the response was complete (no finish_reason was sent)');
      }
      converter.end(out);
      for (const part of out) yield part;
    } finally {
      watchdog.stop();
      try {
        await iterator.return?.();
      } catch {
        // the SDK's cleanup only aborts the request; nothing to report
      }
    }
  }

  #failure(error: unknown, watchdog: IdleWatchdog): unknown {
    const { signal } = this.options;
    if (signal?.aborted) return signal.reason;
    if (watchdog.fired) return this.#timeout();
    return convertError(error, { secrets: this.options.secrets() });
  }

  #timeout(): APITimeoutError {
    return new APITimeoutError(`The server sent nothing for ${this.options.idleTimeoutMs} ms (stream timeout)`);
  }
}
