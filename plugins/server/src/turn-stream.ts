/**
 * The chunks of one turn, as SSE frames, for the response that started it and for every reader that
 * resumes it (each reads from the first chunk on). Readers pull (a `ReadableStream` with no queue of
 * its own): a slow reader holds back nothing but its own position in the buffer.
 *
 * Bounded: once the frames take more than `maxBytes`, the turn is no longer replayable (a new
 * resume gets none), frames every reader has passed are dropped, and a reader that falls more than
 * `maxBytes` behind is cut off (its stream ends; the turn goes on).
 */
export class TurnStream {
  private frames: string[] = [];
  /** The index of `frames[0]` among all frames of the turn. */
  private base = 0;
  private bytes = 0;
  private ended = false;
  private readonly positions = new Set<{ position: number }>();
  private wake: (() => void) | undefined;
  private woken: Promise<void> | undefined;
  /** Whether a new reader can read the turn from its start. */
  replayable = true;

  constructor(private readonly maxBytes: number) {}

  /** Whether the turn is over (every frame written). */
  get done(): boolean {
    return this.ended;
  }

  /** Adds a frame (ignored once the turn is over). */
  write(frame: string): void {
    if (this.ended) return;
    this.frames.push(frame);
    this.bytes += Buffer.byteLength(frame);
    if (this.bytes > this.maxBytes) {
      this.replayable = false;
      this.trim();
    }
    this.notify();
  }

  /** Ends the turn: readers end once they have read every frame. */
  end(): void {
    this.ended = true;
    this.notify();
  }

  /** A stream of the turn's frames from its first one, UTF-8 encoded. */
  reader(): ReadableStream<Uint8Array> {
    const cursor = { position: this.base };
    this.positions.add(cursor);
    const encoder = new TextEncoder();
    return new ReadableStream<Uint8Array>(
      {
        pull: async (controller) => {
          for (;;) {
            if (cursor.position < this.base) {
              // Cut off: the frames it had not read were dropped.
              this.positions.delete(cursor);
              controller.close();
              return;
            }
            const index = cursor.position - this.base;
            if (index < this.frames.length) {
              controller.enqueue(encoder.encode(this.frames[index]));
              cursor.position++;
              if (!this.replayable) this.trim();
              return;
            }
            if (this.ended) {
              this.positions.delete(cursor);
              controller.close();
              return;
            }
            await this.nextFrame();
          }
        },
        cancel: () => {
          this.positions.delete(cursor);
          if (!this.replayable) this.trim();
        },
      },
      { highWaterMark: 0 },
    );
  }

  /** Drops the frames every reader has passed, then, while still over the bound, those of the slowest readers. */
  private trim(): void {
    let keepFrom = this.base + this.frames.length;
    for (const cursor of this.positions) keepFrom = Math.min(keepFrom, cursor.position);
    this.dropBefore(keepFrom);
    while (this.bytes > this.maxBytes && this.frames.length > 1) this.dropBefore(this.base + 1);
  }

  private dropBefore(index: number): void {
    const count = index - this.base;
    if (count <= 0) return;
    for (const frame of this.frames.slice(0, count)) this.bytes -= Buffer.byteLength(frame);
    this.frames = this.frames.slice(count);
    this.base = index;
  }

  private nextFrame(): Promise<void> {
    this.woken ??= new Promise<void>((resolve) => (this.wake = resolve));
    return this.woken;
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    this.woken = undefined;
    wake?.();
  }
}
