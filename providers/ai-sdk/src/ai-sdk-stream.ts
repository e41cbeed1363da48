/**
 * The stream of one AI SDK generation as a kosong `StreamedMessage`.
 *
 * @module
 */
import type { StreamedMessagePart } from '@kosong/core';
import { APITimeoutError, ChatProviderError, type FinishReason, type StreamedMessage, type TokenUsage } from '@kosong/core/provider-kit';

import type { ProviderMetadata } from './provider-metadata.js';
import type { SilenceWatchdog } from './silence-watchdog.js';

/** What turns the parts of the model's stream into kosong parts (`PartConverter`), and what it learns of the message. */
export interface StreamConverter {
  readonly id: string | undefined;
  readonly responseModelId: string | undefined;
  readonly usage: TokenUsage | undefined;
  readonly finishReason: FinishReason | undefined;
  readonly reasoningTokens: number | undefined;
  readonly providerMetadata: ProviderMetadata | undefined;
  readonly warnings: readonly unknown[];
  /** Converts one part of the model's stream, writing the kosong parts it makes to `out`; throws for an `error` part. */
  push(part: unknown, out: StreamedMessagePart[]): void;
  /** The stream ended: writes what was held back, if anything, to `out`; throws when the response is incomplete. */
  end(out: StreamedMessagePart[]): void;
}

/** What an {@link AiSdkStream} reads, and how it ends its request. */
export interface AiSdkStreamSource {
  /** The model's stream of parts (`doStream`'s `stream`). */
  readonly stream: ReadableStream<unknown>;
  /** The caller's signal: once it aborts, the stream throws its reason. */
  readonly signal: AbortSignal | undefined;
  /**
   * Aborts the model's request (the signal the model was given): on the caller's abort, on the idle
   * timeout, and when the stream is left early.
   */
  readonly request: AbortController;
  /** Called once when the stream is done with the request, however it ended (e.g. to stop watching the caller's signal). */
  readonly release: () => void;
  /** The timeout of the call, already running (it timed the request until the stream came). */
  readonly timer: SilenceWatchdog;
  /** The converter of the stream's parts. */
  readonly converter: StreamConverter;
  /** Maps a failure (a broken stream, an `error` part, an incomplete response) to the error to throw. Not called for an abort or the idle timeout. */
  readonly convertError: (error: unknown) => Promise<unknown>;
  /** The trace id of the response (its `x-trace-id` header), if the model reported its headers. */
  readonly traceId: string | undefined;
}

/**
 * A `StreamedMessage` over an AI SDK model's stream of parts: iterated once, it reads the stream
 * to its end and yields the kosong parts of each stream part as it comes (see `PartConverter`).
 *
 * It throws the caller's signal's reason once the signal aborts (the model's stream is cancelled at
 * once, even by a model that does not watch its signal); an `APITimeoutError` when the model sends
 * nothing for the call's timeout (only the time spent waiting for the model counts, not the
 * consumer's); what the converter makes of a failed read, an `error` part or an incomplete response.
 * A consumer that leaves the loop early aborts the model's request.
 *
 * Besides the `StreamedMessage` facts it tells what the kosong types have no field for:
 * `reasoningTokens`, the finish's `providerMetadata`, the `warnings` of the model and the
 * `responseModelId`.
 */
export class AiSdkStream implements StreamedMessage {
  readonly traceId: string | undefined;
  readonly #source: AiSdkStreamSource;
  #iterated = false;

  constructor(source: AiSdkStreamSource) {
    this.#source = source;
    this.traceId = source.traceId;
  }

  /** The message id, from the model's `response-metadata`. */
  get id(): string | undefined {
    return this.#source.converter.id;
  }

  /** The token usage, once the `finish` part came. */
  get usage(): TokenUsage | undefined {
    return this.#source.converter.usage;
  }

  /** Why the model stopped, once the `finish` part came. */
  get finishReason(): FinishReason | undefined {
    return this.#source.converter.finishReason;
  }

  /** The reasoning tokens among the output tokens, when the model reports them. */
  get reasoningTokens(): number | undefined {
    return this.#source.converter.reasoningTokens;
  }

  /** The provider metadata of the `finish` part (e.g. Anthropic's cache and container details). */
  get providerMetadata(): ProviderMetadata | undefined {
    return this.#source.converter.providerMetadata;
  }

  /** The warnings the model gave at the start of the stream (settings it could not honour in full). */
  get warnings(): readonly unknown[] {
    return this.#source.converter.warnings;
  }

  /** The model the response names, when it names one. */
  get responseModelId(): string | undefined {
    return this.#source.converter.responseModelId;
  }

  [Symbol.asyncIterator](): AsyncIterator<StreamedMessagePart> {
    if (this.#iterated) throw new ChatProviderError('An AI SDK stream can be read only once');
    this.#iterated = true;
    return new PartReader(this.#source);
  }
}

/** What one read of the model's stream gives. */
type ReadResult = Awaited<ReturnType<ReadableStreamDefaultReader<unknown>['read']>>;

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

/**
 * The read loop, as a plain iterator (not an async generator: one promise less a part): each
 * `next()` hands out the next converted part, reading the model's stream when none is left.
 */
class PartReader implements AsyncIterator<StreamedMessagePart, undefined> {
  readonly #source: AiSdkStreamSource;
  readonly #reader: ReadableStreamDefaultReader<unknown>;
  /** The parts of the last stream part read, handed out from `#index` on. */
  readonly #out: StreamedMessagePart[] = [];
  #index = 0;
  /** An error to throw once the parts before it are handed out. */
  #failure: { readonly error: unknown } | undefined;
  #complete = false;
  #closed = false;
  /** A model that does not watch its signal still stops: the pending read ends at once. */
  readonly #cancel = (): void => void this.#reader.cancel(this.#source.request.signal.reason).catch(() => undefined);

  constructor(source: AiSdkStreamSource) {
    this.#source = source;
    this.#reader = source.stream.getReader();
    source.request.signal.addEventListener('abort', this.#cancel, { once: true });
  }

  next(): Promise<IteratorResult<StreamedMessagePart, undefined>> {
    if (this.#index < this.#out.length) return Promise.resolve({ done: false, value: this.#out[this.#index++]! });
    if (this.#failure !== undefined || this.#closed || this.#source.signal?.aborted) return this.#more();
    // The usual path, one read and its conversion as a reaction (no async frame per part); a read
    // that fails, the end, a stop or a conversion that throws take the loop below.
    this.#out.length = 0;
    this.#index = 0;
    this.#source.timer.waiting = true;
    return this.#reader.read().then(this.#onRead, this.#onReadError);
  }

  readonly #onRead = (read: ReadResult): IteratorResult<StreamedMessagePart, undefined> | Promise<IteratorResult<StreamedMessagePart, undefined>> => {
    const { timer, converter } = this.#source;
    timer.waiting = false;
    timer.received();
    if (read.done || this.#stopped() !== undefined) return this.#more(read);
    const out = this.#out;
    try {
      converter.push(read.value, out);
    } catch (error) {
      return this.#more(undefined, { error });
    }
    return out.length > 0 ? { done: false, value: out[this.#index++]! } : this.next();
  };

  readonly #onReadError = (error: unknown): Promise<IteratorResult<StreamedMessagePart, undefined>> => {
    const { timer } = this.#source;
    timer.waiting = false;
    timer.received();
    return this.#more(undefined, undefined, { error });
  };

  /** The consumer left the loop: the request is aborted unless the stream was read to its end. */
  return(): Promise<IteratorResult<StreamedMessagePart, undefined>> {
    this.#close();
    return Promise.resolve(DONE);
  }

  /**
   * The read loop. `made`: a read the fast path made (its parts not converted yet); `converting`: the
   * error its conversion threw; `readFailure`: the error its read rejected with.
   */
  async #more(
    made?: ReadResult,
    converting?: { readonly error: unknown },
    readFailure?: { readonly error: unknown },
  ): Promise<IteratorResult<StreamedMessagePart, undefined>> {
    const { signal, timer, converter } = this.#source;
    const out = this.#out;
    let given = made;
    try {
      if (readFailure !== undefined) throw await this.#fail(readFailure.error);
      if (converting !== undefined) {
        // the parts before the failing one come first
        this.#failure = { error: await this.#fail(converting.error) };
        if (out.length > 0) return { done: false, value: out[this.#index++]! };
      }
      if (this.#failure !== undefined) throw this.#failure.error;
      if (this.#closed) return DONE;
      for (;;) {
        let read: ReadResult;
        if (given !== undefined) {
          read = given;
          given = undefined;
        } else {
          out.length = 0;
          this.#index = 0;
          if (signal?.aborted) throw signal.reason;
          timer.waiting = true;
          try {
            read = await this.#reader.read();
          } catch (error) {
            throw await this.#fail(error);
          } finally {
            timer.waiting = false;
            timer.received();
          }
        }
        const stop = this.#stopped();
        if (stop !== undefined) throw stop;
        if (read.done) {
          try {
            converter.end(out);
          } catch (error) {
            throw await this.#fail(error);
          }
          this.#complete = true;
          this.#close();
          return out.length > 0 ? { done: false, value: out[this.#index++]! } : DONE;
        }
        try {
          converter.push(read.value, out);
        } catch (error) {
          // the parts before a failing one come first
          this.#failure = { error: await this.#fail(error) };
        }
        if (out.length > 0) return { done: false, value: out[this.#index++]! };
        if (this.#failure !== undefined) throw this.#failure.error;
      }
    } catch (error) {
      this.#failure = undefined;
      this.#close();
      throw error;
    }
  }

  /** Why the stream stops, if it must: the caller's abort, or the timeout. */
  #stopped(): unknown {
    const { signal, timer } = this.#source;
    return signal?.aborted ? signal.reason : timer.fired ? timeoutError(timer.ms) : undefined;
  }

  async #fail(error: unknown): Promise<unknown> {
    return this.#stopped() ?? (await this.#source.convertError(error));
  }

  /** Done with the request, however the stream ended (once). */
  #close(): void {
    if (this.#closed) return;
    this.#closed = true;
    const { request, timer } = this.#source;
    timer.stop();
    request.signal.removeEventListener('abort', this.#cancel);
    if (!this.#complete) {
      request.abort(new ChatProviderError('The stream was not read to its end'));
      this.#reader.cancel().catch(() => undefined);
    }
    this.#source.release();
  }
}

/** The error of a call the model answered nothing to for `ms`. */
export function timeoutError(ms: number): APITimeoutError {
  return new APITimeoutError(`The model sent nothing for ${ms} ms (timeout)`);
}
