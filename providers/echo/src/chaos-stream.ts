import {
  toolCallPart,
  type FinishReason,
  type StreamedMessage,
  type StreamedMessagePart,
  type TokenUsage,
} from '@kosong/core';

import type { RandomSource } from './seeded-random.js';

/** What a {@link ChaosStream} does to the stream it wraps. @internal */
export interface ChaosStreamPlan {
  /** Draws for the corruption of tool calls. */
  readonly random: RandomSource;
  /** Probability that a tool call or fragment whose arguments end with `}` loses it. */
  readonly corruptToolCallProbability: number;
  /** Throw `disconnect` instead of the part after this many parts (or at the end, if there are fewer). */
  readonly disconnectAfter: number | undefined;
  /** The error of the disconnect. */
  readonly disconnect: () => Error;
  /** Told about each corrupted part. */
  readonly onCorrupt: () => void;
}

/**
 * A stream wrapped by {@link ChaosChatProvider}: it may break off with an `APIConnectionError`
 * part-way, and may drop the trailing `}` of tool-call arguments. Everything else (parts, `id`,
 * `usage`, `finishReason`, `traceId`) is the wrapped stream's. Parts are never modified: a
 * corrupted part is a new object.
 */
export class ChaosStream implements StreamedMessage {
  constructor(
    private readonly inner: StreamedMessage,
    private readonly plan: ChaosStreamPlan,
  ) {}

  get id(): string | undefined {
    return this.inner.id;
  }

  get usage(): TokenUsage | undefined {
    return this.inner.usage;
  }

  get finishReason(): FinishReason | undefined {
    return this.inner.finishReason;
  }

  get traceId(): string | undefined {
    return this.inner.traceId;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<StreamedMessagePart> {
    const { disconnectAfter } = this.plan;
    let yielded = 0;
    for await (const part of this.inner) {
      if (yielded === disconnectAfter) throw this.plan.disconnect();
      yield this.corrupt(part);
      yielded++;
    }
    if (disconnectAfter !== undefined) throw this.plan.disconnect();
  }

  private corrupt(part: StreamedMessagePart): StreamedMessagePart {
    const { random, corruptToolCallProbability: p } = this.plan;
    if (p <= 0) return part;
    if (part.type === 'function') {
      const args = part.function.arguments;
      if (args === null || !args.endsWith('}') || random() >= p) return part;
      this.plan.onCorrupt();
      return { ...part, function: { ...part.function, arguments: args.slice(0, -1) } };
    }
    if (part.type === 'tool_call_part') {
      const fragment = part.argumentsPart;
      if (fragment === null || !fragment.endsWith('}') || random() >= p) return part;
      this.plan.onCorrupt();
      return toolCallPart(fragment.slice(0, -1));
    }
    return part;
  }
}
