const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** A one-line spinner on a terminal stream: `start(label)`, `stop()`; it erases itself. */
export class Spinner {
  private timer: NodeJS.Timeout | undefined;
  private frame = 0;
  private label = '';

  constructor(private readonly out: NodeJS.WriteStream) {}

  get spinning(): boolean {
    return this.timer !== undefined;
  }

  start(label: string): void {
    this.label = label;
    if (this.timer) return;
    this.draw();
    this.timer = setInterval(() => this.draw(), 80);
    this.timer.unref();
  }

  stop(): void {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
    this.out.write('\r\x1b[2K');
  }

  private draw(): void {
    this.out.write(`\r\x1b[2K${FRAMES[this.frame++ % FRAMES.length]} ${this.label}`);
  }
}
