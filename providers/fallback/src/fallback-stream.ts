import type { StreamedMessagePart } from '@kosong/core';
import type { FinishReason, StreamedMessage, TokenUsage } from '@kosong/core/provider-kit';

import type { ModelFailure } from './errors.js';
import type { ModelRef } from './model-ref.js';

/** What a model started: its stream, read up to its first part. */
export interface StartedStream {
  readonly stream: StreamedMessage;
  readonly iterator: AsyncIterator<StreamedMessagePart>;
  /** The first read: the first part, or the end of a stream without parts. */
  readonly first: IteratorResult<StreamedMessagePart>;
}

/**
 * The stream of a fallback provider's call: the stream of the model that delivered a first part,
 * that part first, then the rest as the model sends it. From the first part on it is that model's:
 * a failure is thrown as it is (the `onFailureAfterOutput` listener hears of it), never answered by
 * another model. `id`, `usage`, `traceId` and `finishReason` are the model's.
 */
export class FallbackStream implements StreamedMessage {
  #iterated = false;

  constructor(
    private readonly started: StartedStream,
    /** The model whose stream this is. */
    readonly model: ModelRef,
    /** The models passed over before it in this call, with their errors (empty when the first model answered). */
    readonly passedOver: readonly ModelFailure[],
    private readonly signal: AbortSignal | undefined,
    private readonly onFailure: (error: unknown) => void,
  ) {}

  get id(): string | undefined {
    return this.started.stream.id;
  }

  get usage(): TokenUsage | undefined {
    return this.started.stream.usage;
  }

  get traceId(): string | undefined {
    return this.started.stream.traceId;
  }

  get finishReason(): FinishReason | undefined {
    return this.started.stream.finishReason;
  }

  /** Iterate once: the first part (already read), then the model's. Stopping early closes the model's stream. */
  [Symbol.asyncIterator](): AsyncIterator<StreamedMessagePart> {
    if (this.#iterated) throw new TypeError('A FallbackStream can be iterated once');
    this.#iterated = true;
    return this.#parts();
  }

  async *#parts(): AsyncGenerator<StreamedMessagePart, void, undefined> {
    const { iterator, first } = this.started;
    if (first.done === true) return;
    let ended = false;
    try {
      yield first.value;
      for (;;) {
        let next: IteratorResult<StreamedMessagePart>;
        try {
          next = await iterator.next();
        } catch (error) {
          ended = true;
          if (this.signal?.aborted !== true) this.onFailure(error);
          throw error;
        }
        if (next.done === true) {
          ended = true;
          return;
        }
        yield next.value;
      }
    } finally {
      // The consumer stopped early (`break`, a throw in its loop): the model's stream stops too.
      if (!ended) await iterator.return?.();
    }
  }
}
