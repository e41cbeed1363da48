/**
 * For providers that read a response body themselves: fires once when a stream has waited longer
 * than `timeoutMs` for its next chunk. Time the consumer spends between chunks does not count: the
 * clock runs only between {@link IdleTimer.waiting} and {@link IdleTimer.idle}. One timer for the
 * whole stream, re-armed with `refresh()` (no allocation per chunk), unref'd so it never keeps the
 * process alive.
 *
 * @example
 * const timer = new IdleTimer(timeoutMs, () => request.abort(new APITimeoutError('stream idle')));
 * try {
 *   for (;;) {
 *     timer.waiting();
 *     const chunk = await reader.read().finally(() => timer.idle());
 *     // …
 *   }
 * } finally {
 *   timer.stop();
 * }
 */
export class IdleTimer {
  readonly #timer: ReturnType<typeof setTimeout>;
  #waiting = false;
  #fired = false;

  constructor(
    private readonly timeoutMs: number,
    private readonly onTimeout: () => void,
  ) {
    this.#timer = setTimeout(() => this.#expire(), timeoutMs);
    this.#timer.unref();
  }

  /** Whether it fired. */
  get fired(): boolean {
    return this.#fired;
  }

  /** The timeout, for messages. */
  get ms(): number {
    return this.timeoutMs;
  }

  /** The stream starts waiting for its next chunk: the clock starts from now. */
  waiting(): void {
    this.#waiting = true;
    if (!this.#fired) this.#timer.refresh();
  }

  /** A chunk (or the end, or an error) arrived: the clock stops. */
  idle(): void {
    this.#waiting = false;
  }

  /** Stops for good. */
  stop(): void {
    clearTimeout(this.#timer);
  }

  #expire(): void {
    // Not waiting: the consumer is busy. The next `waiting()` re-arms the timer.
    if (!this.#waiting || this.#fired) return;
    this.#fired = true;
    this.onTimeout();
  }
}
