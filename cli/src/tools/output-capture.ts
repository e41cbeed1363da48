import { formatCount } from '../format-count.js';
import { formatSize } from '../format-size.js';

/**
 * Keeps a bounded record of a command's output: the first `headBytes` and the last `tailBytes`,
 * whatever its length; the bytes in between are counted and dropped as they arrive. Memory stays
 * under `headBytes + tailBytes` plus one chunk, even for a command that never stops writing.
 */
export class OutputCapture {
  private readonly head: Buffer[] = [];
  private headLength = 0;
  private tail: Buffer[] = [];
  private tailLength = 0;
  /** Every byte written, kept or not. */
  total = 0;

  constructor(
    private readonly headBytes: number,
    private readonly tailBytes: number,
  ) {}

  /** Takes the next chunk of output. */
  write(chunk: Buffer): void {
    this.total += chunk.length;
    let rest = chunk;
    if (this.headLength < this.headBytes) {
      const taken = rest.subarray(0, this.headBytes - this.headLength);
      this.head.push(Buffer.from(taken));
      this.headLength += taken.length;
      rest = rest.subarray(taken.length);
    }
    if (rest.length === 0) return;
    this.tail.push(rest.length > this.tailBytes ? Buffer.from(rest.subarray(rest.length - this.tailBytes)) : Buffer.from(rest));
    this.tailLength += Math.min(rest.length, this.tailBytes);
    while (this.tailLength - this.tail[0]!.length >= this.tailBytes) this.tailLength -= this.tail.shift()!.length;
  }

  /** How many bytes were dropped between the head and the tail. */
  get cut(): number {
    return this.total - this.headLength - Math.min(this.tailLength, this.tailBytes);
  }

  /**
   * The output as text (UTF-8). When bytes were dropped, a line between head and tail says how
   * many: `[… 12.3 MiB (12,912,123 bytes) of output cut …]`.
   */
  text(): string {
    const tail = Buffer.concat(this.tail);
    const kept = tail.subarray(Math.max(0, tail.length - this.tailBytes));
    const head = Buffer.concat(this.head).toString('utf8');
    if (this.cut === 0) return head + kept.toString('utf8');
    const marker = `[… ${formatSize(this.cut)} (${formatCount(this.cut)} bytes) of output cut …]`;
    return `${head}${head.endsWith('\n') ? '' : '\n'}${marker}\n${kept.toString('utf8')}`;
  }
}
