/**
 * The timeout of a call: fires when the model has sent nothing for a while, with no timer
 * operation per part (re-arming a timer for every part of a 100k-part stream costs more than the
 * rest of the bridge's work on it).
 *
 * @module
 */

/**
 * One timer for the whole call, checked every `ms`: it fires at the first check that finds the call
 * waiting for the model and nothing received since the check before — after `ms` to 2 × `ms` of
 * silence. Time the consumer spends between parts does not count (the call is not waiting then).
 * Unref'd: it never keeps the process alive.
 */
export class SilenceWatchdog {
  /** Whether the call waits for the model now: set before each wait, cleared after it. */
  waiting = false;
  #fired = false;
  #received = 0;
  #checked = 0;
  readonly #timer: ReturnType<typeof setTimeout>;

  constructor(
    /** The silence allowed, in ms. */
    readonly ms: number,
    private readonly onTimeout: () => void,
  ) {
    this.#timer = setTimeout(() => this.#check(), ms);
    this.#timer.unref();
  }

  /** Whether it fired. */
  get fired(): boolean {
    return this.#fired;
  }

  /** Something came from the model (the stream, a part of it). */
  received(): void {
    this.#received++;
  }

  /** Stops for good. */
  stop(): void {
    clearTimeout(this.#timer);
  }

  #check(): void {
    if (this.waiting && this.#received === this.#checked) {
      this.#fired = true;
      this.onTimeout();
      return;
    }
    this.#checked = this.#received;
    this.#timer.refresh();
  }
}
