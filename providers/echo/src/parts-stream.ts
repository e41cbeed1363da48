import type { FinishReason, StreamedMessage, StreamedMessagePart, TokenUsage } from '@kosong/core';
import { abortableDelay } from '@kosong/core/runtime';

/** How a {@link PartsStream} behaves and what it reports. */
export interface PartsStreamOptions {
  readonly id?: string | undefined;
  readonly usage?: TokenUsage | undefined;
  readonly finishReason?: FinishReason | undefined;
  readonly traceId?: string | undefined;
  /** Delay before each part, in ms (0: yield to the event loop with a timer; undefined: no delay). */
  readonly delayMs?: number | undefined;
  /** Throw `error` after yielding this many parts (0: before the first part; past the end: at the end). */
  readonly errorAfter?: { readonly parts: number; readonly error: unknown } | undefined;
  /**
   * When it aborts, a pending delay ends at once and the stream throws the signal's reason before
   * the next part. Undefined: the stream ignores aborts.
   */
  readonly signal?: AbortSignal | undefined;
}

/**
 * A {@link StreamedMessage} over a fixed list of parts: the stream of the offline providers. It
 * yields the given part objects themselves, in order.
 */
export class PartsStream implements StreamedMessage {
  readonly id: string | undefined;
  readonly usage: TokenUsage | undefined;
  readonly finishReason: FinishReason | undefined;
  readonly traceId: string | undefined;

  constructor(
    private readonly parts: readonly StreamedMessagePart[],
    private readonly options: PartsStreamOptions = {},
  ) {
    this.id = options.id;
    this.usage = options.usage;
    this.finishReason = options.finishReason;
    this.traceId = options.traceId;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<StreamedMessagePart> {
    const { delayMs, errorAfter, signal } = this.options;
    for (let i = 0; i < this.parts.length; i++) {
      if (errorAfter && i === errorAfter.parts) throw errorAfter.error;
      if (delayMs !== undefined) await abortableDelay(delayMs, signal);
      if (signal?.aborted) throw signal.reason;
      yield this.parts[i]!;
    }
    if (errorAfter && errorAfter.parts >= this.parts.length) throw errorAfter.error;
  }
}
