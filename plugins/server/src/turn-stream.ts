/** Why a reader of a {@link TurnStream} was detached: it fell too far behind the turn. */
export class TurnReaderDetachedError extends Error {
  override readonly name = 'TurnReaderDetachedError';
}

/** A reader of the turn: the index of the next frame it reads, and how to detach it. */
interface Cursor {
  position: number;
  readonly detach: (reason: string) => void;
}

/**
 * The chunks of one turn, as SSE frames, for the response that started it and for every reader that
 * resumes it (each reads from the first chunk on). Readers pull (a `ReadableStream` with no queue of
 * its own), each pull taking every frame written since the last: a slow reader holds back nothing
 * but its own position in the buffer.
 *
 * Bounded twice, so that it holds at most about `max(maxBytes, maxLagBytes)`:
 *
 * - the turn: once the frames take more than `maxBytes`, the turn is no longer replayable (a new
 *   resume gets none), and frames every reader has passed are dropped;
 * - each reader: one that has not pulled the last `maxLagBytes` written (a client that does not
 *   read: its socket is full) is detached — its stream errors, so the connection is closed, never
 *   ended as if the turn were over — while the turn goes on, still resumable from its start if it
 *   is within `maxBytes`.
 */
export class TurnStream {
  private frames: string[] = [];
  /** The byte offset in the turn of each frame of `frames` (parallel to it). */
  private offsets: number[] = [];
  /** The index of `frames[0]` among all frames of the turn. */
  private base = 0;
  /** Bytes of `frames`. */
  private bytes = 0;
  /** Bytes written in the turn (dropped frames too). */
  private written = 0;
  private ended = false;
  private readonly cursors = new Set<Cursor>();
  private wake: (() => void) | undefined;
  private woken: Promise<void> | undefined;
  /** Whether a new reader can read the turn from its start. */
  replayable = true;

  constructor(
    private readonly maxBytes: number,
    private readonly maxLagBytes: number = maxBytes,
  ) {}

  /** Whether the turn is over (every frame written). */
  get done(): boolean {
    return this.ended;
  }

  /** How many readers read the turn now. */
  get readers(): number {
    return this.cursors.size;
  }

  /** Adds a frame (ignored once the turn is over). */
  write(frame: string): void {
    if (this.ended) return;
    this.frames.push(frame);
    this.offsets.push(this.written);
    const size = Buffer.byteLength(frame);
    this.bytes += size;
    this.written += size;
    for (const cursor of [...this.cursors]) {
      if (this.lagOf(cursor) > this.maxLagBytes) cursor.detach(`The client read too slowly: more than ${this.maxLagBytes} bytes of the turn were waiting for it`);
    }
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
    const encoder = new TextEncoder();
    let cursor: Cursor;
    return new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          cursor = {
            position: this.base,
            detach: (reason) => {
              if (!this.cursors.delete(cursor)) return;
              controller.error(new TurnReaderDetachedError(reason));
            },
          };
          this.cursors.add(cursor);
        },
        pull: async (controller) => {
          for (;;) {
            if (!this.cursors.has(cursor)) return; // detached
            const index = cursor.position - this.base;
            if (index < this.frames.length) {
              // Every frame waiting for this reader at once: one chunk, so one write to its socket.
              const waiting = this.frames.length - index;
              controller.enqueue(encoder.encode(waiting === 1 ? this.frames[index] : this.frames.slice(index).join('')));
              cursor.position += waiting;
              this.trimIfDone();
              return;
            }
            if (this.ended) {
              this.cursors.delete(cursor);
              controller.close();
              return;
            }
            await this.nextFrame();
          }
        },
        cancel: () => {
          this.cursors.delete(cursor);
          this.trimIfDone();
        },
      },
      { highWaterMark: 0 },
    );
  }

  /** Bytes written that `cursor` has not read. */
  private lagOf(cursor: Cursor): number {
    const index = cursor.position - this.base;
    return index < this.offsets.length ? this.written - this.offsets[index]! : 0;
  }

  private trimIfDone(): void {
    if (!this.replayable) this.trim();
  }

  /** Drops the frames every reader has passed (readers more than `maxLagBytes` behind are detached as frames come). */
  private trim(): void {
    let keepFrom = this.base + this.frames.length;
    for (const cursor of this.cursors) keepFrom = Math.min(keepFrom, cursor.position);
    this.dropBefore(keepFrom);
  }

  private dropBefore(index: number): void {
    const count = index - this.base;
    if (count <= 0) return;
    for (const frame of this.frames.slice(0, count)) this.bytes -= Buffer.byteLength(frame);
    this.frames = this.frames.slice(count);
    this.offsets = this.offsets.slice(count);
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
