import { createInterface, type Interface } from 'node:readline';

/** Options of an {@link InputReader}. */
export interface InputReaderOptions {
  readonly input: NodeJS.ReadStream;
  readonly output: NodeJS.WriteStream;
  /**
   * A terminal with line editing: a prompt is drawn, keys are read in raw mode (Ctrl-C arrives as
   * a key, see `onInterrupt`), and bracketed paste is on. Off: lines are read as they come (a pipe,
   * a file, `TERM=dumb`), with no prompt unless `prompt` is set anyway.
   */
  readonly lineEditing: boolean;
  /** Draw the prompt (default: with line editing). */
  readonly showPrompt?: boolean;
  /** Ctrl-C pressed (with line editing, where it is a key, not a signal). */
  readonly onInterrupt: () => void;
  /** Any other key pressed (with line editing). */
  readonly onTyping?: () => void;
}

const PROMPT = '› ';
const CONTINUATION_PROMPT = '… ';
/** Turns bracketed paste on and off: the terminal then marks pasted text, so its lines stay one input. */
const PASTE_ON = '\x1b[?2004h';
const PASTE_OFF = '\x1b[?2004l';

/**
 * Reads what the user types, one *input* at a time: a line, or several lines when the user ends
 * a line with `\` (it continues on the next one) or pastes them (with line editing, a paste is one
 * input, sent with Enter). At the prompt, Ctrl-C clears what was typed (see {@link cancelInput}).
 */
export class InputReader {
  private readonly rl: Interface;
  /** Complete inputs not asked for yet (typed ahead, or lines of a pipe). */
  private readonly ready: string[] = [];
  /** The lines of the input being put together. */
  private lines: string[] = [];
  private pasting = false;
  private closed = false;
  /** The `resolve` of a `next()` waiting for input. */
  private waiting: ((input: string | undefined) => void) | undefined;
  /** The next `line` event is the input Ctrl-C cleared: drop it. */
  private dropNextLine = false;
  private readonly showPrompt: boolean;
  private readonly restoreTerminal = (): void => void this.options.output.write(PASTE_OFF);

  constructor(private readonly options: InputReaderOptions) {
    const { input, output, lineEditing } = options;
    this.showPrompt = options.showPrompt ?? lineEditing;
    this.rl = createInterface({ input, ...(lineEditing ? { output, prompt: PROMPT } : {}), terminal: lineEditing });
    this.rl.on('line', (line) => this.onLine(line));
    this.rl.on('close', () => this.onClose());
    if (lineEditing) {
      this.rl.on('SIGINT', options.onInterrupt);
      input.on('keypress', this.onKeypress);
      output.write(PASTE_ON);
      process.on('exit', this.restoreTerminal);
    }
  }

  /** Whether the user is at the prompt (a `next()` is waiting). */
  get atPrompt(): boolean {
    return this.waiting !== undefined;
  }

  /** The next input, without the line breaks of continued lines removed; `undefined` at the end of input. */
  next(): Promise<string | undefined> {
    const input = this.ready.shift();
    if (input !== undefined) return Promise.resolve(input);
    if (this.closed) return Promise.resolve(undefined);
    this.prompt();
    return new Promise((resolve) => (this.waiting = resolve));
  }

  /**
   * Ctrl-C at the prompt: what was typed (or pasted, or continued) is dropped and, with line
   * editing, the cursor goes to a new line, as in a shell. Returns whether anything was dropped.
   */
  cancelInput(): boolean {
    const typed = this.rl.line;
    const dropped = typed !== '' || this.lines.length > 0;
    this.lines = [];
    this.pasting = false;
    if (this.options.lineEditing) {
      // Move to the end of what was typed, mark it, and end the line the way Enter would (readline
      // then knows the cursor is on a fresh line), dropping the line. It stays in the history: the
      // up arrow brings it back.
      this.rl.write(null, { ctrl: true, name: 'e' });
      this.options.output.write('^C');
      this.dropNextLine = true;
      this.rl.write(null, { name: 'enter' });
    }
    return dropped;
  }

  /**
   * Asks a question while no input is awaited (a turn runs), and reads the line answered (not an
   * input of the session). Resolves with `undefined` at the end of input (Ctrl-D: the session then
   * ends after the turn, as at the prompt) and when `signal` aborts (the question is taken back).
   */
  question(text: string, signal: AbortSignal): Promise<string | undefined> {
    if (this.closed || signal.aborted) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const finish = (answer: string | undefined): void => {
        signal.removeEventListener('abort', onAbort);
        this.rl.off('close', onClose);
        resolve(answer);
      };
      const onAbort = (): void => finish(undefined);
      const onClose = (): void => finish(undefined);
      signal.addEventListener('abort', onAbort, { once: true });
      this.rl.on('close', onClose);
      // Without line editing readline has no output to draw the question on: it is written here.
      if (!this.options.lineEditing) this.options.output.write(text);
      this.rl.question(this.options.lineEditing ? text : '', { signal }, finish);
    });
  }

  /** Writes a line of information above a new prompt (at the prompt), e.g. a hint. */
  say(text: string): void {
    this.options.output.write(`${text}\n`);
    if (this.atPrompt) this.prompt();
  }

  /** Stops reading; the terminal is left as it was found. */
  close(): void {
    this.closed = true;
    this.rl.close();
    this.options.input.off('keypress', this.onKeypress);
    if (this.options.lineEditing) {
      this.restoreTerminal();
      process.off('exit', this.restoreTerminal);
    }
  }

  private prompt(): void {
    if (!this.showPrompt) return;
    if (this.options.lineEditing) {
      this.rl.setPrompt(this.lines.length > 0 ? CONTINUATION_PROMPT : PROMPT);
      this.rl.prompt();
    } else {
      this.options.output.write(this.lines.length > 0 ? CONTINUATION_PROMPT : PROMPT);
    }
  }

  private readonly onKeypress = (_text: string | undefined, key: { name?: string; ctrl?: boolean } | undefined): void => {
    if (key?.name === 'paste-start') this.pasting = true;
    else if (key?.name === 'paste-end') this.pasting = false;
    if (!(key?.ctrl === true && key.name === 'c')) this.options.onTyping?.();
  };

  private onLine(line: string): void {
    if (this.dropNextLine) {
      this.dropNextLine = false;
      return;
    }
    if (this.pasting || line.endsWith('\\')) {
      this.lines.push(this.pasting ? line : line.slice(0, -1));
      if (this.atPrompt) this.prompt();
      return;
    }
    const input = [...this.lines, line].join('\n');
    this.lines = [];
    this.deliver(input);
  }

  private onClose(): void {
    // Ctrl-D at the prompt: end the prompt's line, so that what comes next starts on a line of its own.
    if (!this.closed && this.showPrompt) this.options.output.write('\n');
    this.closed = true;
    // What was put together so far is an input of its own (a last line ending with `\`).
    if (this.lines.length > 0) this.deliver(this.lines.join('\n'));
    this.lines = [];
    this.deliver(undefined);
  }

  private deliver(input: string | undefined): void {
    const waiting = this.waiting;
    if (waiting) {
      this.waiting = undefined;
      waiting(input);
    } else if (input !== undefined) {
      this.ready.push(input);
    }
  }
}
