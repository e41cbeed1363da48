/**
 * Fires when a stream has been waiting for its next chunk for longer than `timeoutMs`. Time the
 * consumer spends between chunks does not count. Cheap per chunk: one timer per timeout period, not
 * one per chunk. The timer is unref'd: it never keeps the process alive.
 */
export class IdleWatchdog {
  #timer: ReturnType<typeof setTimeout> | undefined;
  #waitingSince: number | undefined;
  #fired = false;

  constructor(
    private readonly timeoutMs: number,
    private readonly onTimeout: () => void,
  ) {}

  /** Whether it fired. */
  get fired(): boolean {
    return this.#fired;
  }

  /** The stream starts waiting for its next chunk. */
  waiting(): void {
    this.#waitingSince = performance.now();
    if (this.#timer === undefined && !this.#fired) this.#schedule(this.timeoutMs);
  }

  /** A chunk (or the end, or an error) arrived. */
  idle(): void {
    this.#waitingSince = undefined;
  }

  /** Stops for good. */
  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #schedule(delayMs: number): void {
    this.#timer = setTimeout(() => this.#check(), delayMs);
    this.#timer.unref();
  }

  #check(): void {
    this.#timer = undefined;
    if (this.#waitingSince === undefined) return; // not waiting: the next wait re-arms the timer
    const waited = performance.now() - this.#waitingSince;
    if (waited < this.timeoutMs) {
      this.#schedule(this.timeoutMs - waited);
      return;
    }
    this.#fired = true;
    this.onTimeout();
  }
}
