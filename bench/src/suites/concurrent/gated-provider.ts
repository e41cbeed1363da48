/**
 * A provider whose every stream yields its parts, then waits at a gate shared by all streams before
 * it ends: N steps can be held in flight at the same point, mid-stream, as real steps spend their
 * life waiting on the network.
 *
 * @module
 */
import type { ChatProvider, GenerationOptions, StreamedMessage, StreamedMessagePart } from '@kosong/core';

/** A gate many streams wait at, opened once. */
export class Gate {
  #open: () => void = () => {};
  #opened: Promise<void> = Promise.resolve();
  /** How many streams are waiting now. */
  waiting = 0;
  #whenAllWaiting: { count: number; resolve: () => void } | undefined;

  /** Closes the gate; returns a promise of the moment `count` streams wait at it. */
  close(count: number): Promise<void> {
    this.waiting = 0;
    this.#opened = new Promise((resolve) => (this.#open = resolve));
    return new Promise((resolve) => (this.#whenAllWaiting = { count, resolve }));
  }

  /** Opens the gate: every waiting stream goes on. */
  open(): void {
    this.#open();
  }

  /** Waits until the gate opens. */
  pass(): Promise<void> {
    this.waiting++;
    if (this.#whenAllWaiting && this.waiting === this.#whenAllWaiting.count) this.#whenAllWaiting.resolve();
    return this.#opened;
  }
}

/** A provider streaming `parts` and then waiting at `gate`, every call. */
export class GatedProvider implements ChatProvider {
  readonly name = 'gated';
  readonly modelName = 'gated';
  readonly thinkingEffort = undefined;
  readonly generation: GenerationOptions = {};

  constructor(
    private readonly parts: readonly StreamedMessagePart[],
    private readonly gate: Gate,
  ) {}

  generate(): Promise<StreamedMessage> {
    return Promise.resolve(new GatedStream(this.parts, this.gate));
  }

  withThinking(): ChatProvider {
    return this;
  }

  withGeneration(): ChatProvider {
    return this;
  }
}

/** One stream of a {@link GatedProvider} (a class: its generator method is shared by every stream). */
class GatedStream implements StreamedMessage {
  readonly id = 'gated';
  readonly usage = undefined;
  readonly finishReason = 'tool_calls';

  constructor(
    private readonly parts: readonly StreamedMessagePart[],
    private readonly gate: Gate,
  ) {}

  async *[Symbol.asyncIterator](): AsyncIterator<StreamedMessagePart> {
    for (const part of this.parts) yield part;
    await this.gate.pass();
  }
}
