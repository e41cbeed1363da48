/**
 * Fires when a stream has waited longer than `timeoutMs` for its next chunk. Only waiting counts:
 * the time the consumer spends between reads does not. One timer, re-armed with `refresh()` when a
 * wait starts (no allocation per chunk); unref'd, so it never keeps the process alive.
 */
export class IdleTimer {
  readonly #timer: ReturnType<typeof setTimeout>;
  #waiting = false;
  #fired = false;

  constructor(timeoutMs: number, onIdle: () => void) {
    this.#timer = setTimeout(() => {
      if (!this.#waiting) return; // it ran out while the consumer had the chunk: the next wait re-arms it
      this.#fired = true;
      onIdle();
    }, timeoutMs);
    this.#timer.unref();
  }

  /** Whether it fired. */
  get fired(): boolean {
    return this.#fired;
  }

  /** A read starts: the clock restarts. */
  waiting(): void {
    this.#waiting = true;
    if (!this.#fired) this.#timer.refresh();
  }

  /** The read returned. */
  idle(): void {
    this.#waiting = false;
  }

  /** Stops for good. */
  stop(): void {
    clearTimeout(this.#timer);
  }
}
