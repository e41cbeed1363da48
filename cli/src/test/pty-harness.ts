/**
 * Runs the `kosong` CLI on a real pseudo-terminal, for what only a terminal shows: the prompt, line
 * editing, Ctrl-C as a key, bracketed paste, wrapping at the terminal's width, colours. The terminal
 * is `script` (util-linux): it gives the CLI a pty of the size set with `stty`, copies what is
 * written to it from our stdin as typed keys, and what the CLI writes to our stdout, unchanged.
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { CLI_BIN, scaled, sleep } from './cli-harness.js';

/** Whether this machine has `script` (util-linux) to make a pseudo-terminal with. */
export const HAS_SCRIPT = spawnSync('script', ['--version'], { encoding: 'utf8' }).status === 0;

/** Keys as a terminal sends them. */
export const KEY = {
  enter: '\r',
  ctrlC: '\x03',
  ctrlD: '\x04',
  /** Bracketed paste: what a terminal sends for pasted `text` once the program has turned the mode on. */
  paste: (text: string): string => `\x1b[200~${text}\x1b[201~`,
} as const;

/** The prompt the CLI draws. */
export const PROMPT = '› ';

/** Options of {@link PtyCli}. */
export interface PtyOptions {
  readonly columns?: number;
  /** Set (a string) or remove (`undefined`) variables of the CLI's environment; `TERM` defaults to `xterm-256color`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

const live = new Set<PtyCli>();

/** The CLI running on a pseudo-terminal. */
export class PtyCli {
  readonly child: ChildProcessWithoutNullStreams;
  /** Everything written to the terminal, escape codes and `\r` included. */
  output = '';
  readonly exited: Promise<number | null>;
  private readonly listeners = new Set<() => void>();

  constructor(args: readonly string[], cwd: string, options: PtyOptions = {}) {
    const env: NodeJS.ProcessEnv = { ...process.env, TERM: 'xterm-256color' };
    // what would make Node see fewer colours than the terminal has: NO_COLOR and its kin, and `CI`
    // (Node gives 2 colours to a CI it does not know by name; the project's CI sets it)
    for (const name of ['NO_COLOR', 'NODE_DISABLE_COLORS', 'FORCE_COLOR', 'CI', 'TEAMCITY_VERSION', 'NODE_OPTIONS']) delete env[name];
    for (const [name, value] of Object.entries(options.env ?? {})) {
      if (value === undefined) delete env[name];
      else env[name] = value;
    }
    const command = `stty cols ${options.columns ?? 80} rows 24 && exec ${[process.execPath, CLI_BIN, ...args].map(shellQuote).join(' ')}`;
    this.child = spawn('script', ['--quiet', '--return', '--command', command, '/dev/null'], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    live.add(this);
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (chunk: string) => {
      this.output += chunk;
      for (const listener of this.listeners) listener();
    });
    this.child.stderr.resume();
    this.child.stdin.on('error', () => undefined);
    this.exited = new Promise((resolve) => {
      this.child.on('close', (code) => {
        live.delete(this);
        for (const listener of this.listeners) listener();
        resolve(code);
      });
    });
  }

  /** The output as lines of the screen: escape codes removed, split at line ends. */
  get lines(): string[] {
    return stripEscapes(this.output).split(/\r*\n/);
  }

  /** Sends keys (as typed or pasted). */
  type(keys: string): void {
    this.child.stdin.write(keys);
  }

  /** Resolves once the output, from `from` on, matches `pattern`; rejects (with the output) after `timeoutMs` or at exit. */
  waitFor(pattern: RegExp | string, options: { from?: number; timeoutMs?: number } = {}): Promise<void> {
    const { from = 0 } = options;
    const timeoutMs = scaled(options.timeoutMs ?? 8_000);
    const matches = (): boolean => {
      const text = this.output.slice(from);
      return typeof pattern === 'string' ? text.includes(pattern) : pattern.test(text);
    };
    return new Promise((resolve, reject) => {
      const finish = (error?: Error): void => {
        clearTimeout(timer);
        this.listeners.delete(check);
        if (error) reject(error);
        else resolve();
      };
      const check = (): void => {
        if (matches()) finish();
        else if (this.child.exitCode !== null || this.child.signalCode !== null) finish(this.failure(`exited before the output matched ${String(pattern)}`));
      };
      const timer = setTimeout(() => finish(this.failure(`the output did not match ${String(pattern)} within ${timeoutMs} ms`)), timeoutMs);
      this.listeners.add(check);
      check();
    });
  }

  /** Waits for the prompt to be drawn (again) after offset `from`, then a little for the terminal to settle. */
  async waitForPrompt(from = 0): Promise<void> {
    await this.waitFor(PROMPT, { from });
    await sleep(50);
  }

  /** Waits for the exit; kills the process and rejects after `timeoutMs`. */
  async waitForExit(timeoutMs = 10_000): Promise<number | null> {
    timeoutMs = scaled(timeoutMs);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const error = this.failure(`did not exit within ${timeoutMs} ms`);
        this.child.kill('SIGKILL');
        reject(error);
      }, timeoutMs);
    });
    try {
      return await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  private failure(what: string): Error {
    return new Error(`kosong on a pty: ${what}\n--- output ---\n${JSON.stringify(this.output)}`);
  }
}

/** Kills every pty CLI still running (for `afterEach`). */
export function killPtyLeftovers(): void {
  for (const cli of live) cli.child.kill('SIGKILL');
  live.clear();
}

/** Removes escape sequences (CSI, OSC and two-character ones). */
export function stripEscapes(text: string): string {
  // eslint-disable-next-line no-control-regex -- escape sequences are what this removes
  return text.replace(/\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g, '');
}

function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
