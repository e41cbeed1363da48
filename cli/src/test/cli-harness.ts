/**
 * Runs the `kosong` CLI as a subprocess for the specs: no TTY, no colour, in a temporary working
 * directory. Every process started here is tracked so that `killLeftovers()` (in `afterEach`) can
 * make sure none outlives its test.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The `kosong` command as users run it: the bin (`cli/bin/kosong.js`), which runs the bundle `npm run build` made. */
export const CLI_BIN = fileURLToPath(new URL('../../bin/kosong.js', import.meta.url));

/** How a CLI process ended, with everything it wrote. */
export interface CliExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * The `KOSONG_HOME` of the CLI runs of this test process (their usage file), unless a test gives its
 * own: a temporary directory, removed when the process exits, so that no test writes to the user's ~/.kosong.
 */
export const TEST_KOSONG_HOME = mkdtempSync(join(tmpdir(), 'kosong-test-home-'));
process.on('exit', () => rmSync(TEST_KOSONG_HOME, { recursive: true, force: true }));
// For the specs that spawn the CLI with `process.env` of their own (pseudo-terminals, provider loading).
process.env.KOSONG_HOME ??= TEST_KOSONG_HOME;

/** The environment of every CLI run: no colour, not forced either, the tests' `KOSONG_HOME`; `extra` on top. */
function cliEnv(extra: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', TERM: 'dumb', KOSONG_HOME: TEST_KOSONG_HOME, ...extra };
  delete env.FORCE_COLOR;
  delete env.NODE_OPTIONS;
  return env;
}

const live = new Set<CliProcess>();

/**
 * A wait of the harness, stretched by the suite's timeout scale (`KOSONG_TEST_TIMEOUT_SCALE`, set
 * from the machine's load by test-support/load-aware-timeouts.mjs): a CLI that starts in 1 s on an
 * idle machine may take several on a loaded one.
 */
export function scaled(ms: number): number {
  return ms * (Number(process.env.KOSONG_TEST_TIMEOUT_SCALE) || 1);
}

/** A running CLI process. stdin stays open until {@link CliProcess.endInput}. */
export class CliProcess {
  readonly child: ChildProcessWithoutNullStreams;
  stdout = '';
  stderr = '';
  /** Resolves (never rejects) once the process has exited and its output is complete. */
  readonly exited: Promise<CliExit>;
  private readonly listeners = new Set<() => void>();

  constructor(args: readonly string[], cwd: string, env: Readonly<Record<string, string>> = {}) {
    this.child = spawn(process.execPath, [CLI_BIN, ...args], { cwd, env: cliEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
    live.add(this);
    this.child.stdout.setEncoding('utf8');
    this.child.stderr.setEncoding('utf8');
    this.child.stdout.on('data', (chunk: string) => {
      this.stdout += chunk;
      for (const listener of this.listeners) listener();
    });
    this.child.stderr.on('data', (chunk: string) => (this.stderr += chunk));
    this.child.stdin.on('error', () => undefined); // the CLI may exit before reading all input
    this.exited = new Promise((resolve) => {
      this.child.on('close', (code, signal) => {
        live.delete(this);
        for (const listener of this.listeners) listener();
        resolve({ code, signal, stdout: this.stdout, stderr: this.stderr });
      });
    });
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Writes a line to the CLI's stdin. */
  send(line: string): void {
    this.child.stdin.write(`${line}\n`);
  }

  endInput(): void {
    this.child.stdin.end();
  }

  /** Sends SIGINT, as Ctrl-C would (to the CLI process only). */
  interrupt(): void {
    this.child.kill('SIGINT');
  }

  /** Resolves once stdout matches `pattern`; rejects (with the output so far) after `timeoutMs` or if the process exits first. */
  waitForStdout(pattern: RegExp | string, timeoutMs = 5_000): Promise<void> {
    timeoutMs = scaled(timeoutMs);
    const matches = (): boolean => (typeof pattern === 'string' ? this.stdout.includes(pattern) : pattern.test(this.stdout));
    return new Promise((resolve, reject) => {
      const finish = (error?: Error): void => {
        clearTimeout(timer);
        this.listeners.delete(check);
        if (error) reject(error);
        else resolve();
      };
      const check = (): void => {
        if (matches()) finish();
        else if (this.child.exitCode !== null || this.child.signalCode !== null) finish(this.failure(`exited before stdout matched ${String(pattern)}`));
      };
      const timer = setTimeout(() => finish(this.failure(`stdout did not match ${String(pattern)} within ${timeoutMs} ms`)), timeoutMs);
      this.listeners.add(check);
      check();
    });
  }

  /** Waits for the exit; after `timeoutMs` kills the process and rejects with the output so far. */
  async waitForExit(timeoutMs = 10_000): Promise<CliExit> {
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
    return new Error(`kosong ${this.child.spawnargs.slice(2).join(' ')}: ${what}\n--- stdout ---\n${this.stdout}\n--- stderr ---\n${this.stderr}`);
  }
}

/** Starts the CLI in `cwd` with these arguments (and these variables set in its environment). */
export function startCli(args: readonly string[], cwd: string, env: Readonly<Record<string, string>> = {}): CliProcess {
  return new CliProcess(args, cwd, env);
}

/** Runs the CLI to the end: writes `input` (if any) to its stdin, closes it, waits for the exit. */
export function runCli(
  args: readonly string[],
  cwd: string,
  options: { input?: string; timeoutMs?: number; env?: Readonly<Record<string, string>> } = {},
): Promise<CliExit> {
  const cli = startCli(args, cwd, options.env);
  if (options.input !== undefined) cli.child.stdin.write(options.input);
  cli.endInput();
  return cli.waitForExit(options.timeoutMs ?? 30_000);
}

/** Kills every CLI process still running (for `afterEach`); returns how many there were. */
export function killLeftovers(): number {
  const count = live.size;
  for (const cli of live) cli.child.kill('SIGKILL');
  live.clear();
  return count;
}

/** Whether a process is still alive (a zombie, dead but not yet reaped, counts as gone). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return process.platform !== 'linux';
  }
}

/** Polls until the process is gone; resolves with whether it went within `timeoutMs`. */
export async function waitUntilGone(pid: number, timeoutMs = 2_000): Promise<boolean> {
  const deadline = Date.now() + scaled(timeoutMs);
  while (isAlive(pid)) {
    if (Date.now() > deadline) return false;
    await sleep(25);
  }
  return true;
}

/** Polls until `file` exists with a non-empty first line, and returns that line. */
export async function waitForFileLine(file: string, timeoutMs = 5_000): Promise<string> {
  timeoutMs = scaled(timeoutMs);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const line = readFileSync(file, 'utf8').split('\n', 1)[0]!.trim();
      if (line !== '') return line;
    } catch {
      // not there yet
    }
    if (Date.now() > deadline) throw new Error(`${file} was not written within ${timeoutMs} ms`);
    await sleep(25);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * A temporary directory with a working directory for the CLI inside it, plus things outside it that
 * the built-in tools must not reach:
 *
 * ```
 * base/
 *   outside.txt           "TOP SECRET outside the workspace"
 *   work/                 the CLI's cwd
 *     package.json
 *     notes.txt           two lines
 *     src/index.ts
 *     link-out.txt   ->   ../outside.txt   (symlink)
 *     link-base      ->   base             (directory symlink)
 * ```
 */
export interface Workspace {
  readonly base: string;
  readonly cwd: string;
  readonly outsideFile: string;
  readonly secret: string;
  readonly notes: string;
  /** The names `list_directory .` reports for `cwd` at the start. */
  readonly entries: readonly string[];
  remove(): void;
}

export function makeWorkspace(): Workspace {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'kosong-cli-')));
  const cwd = join(base, 'work');
  const secret = 'TOP SECRET outside the workspace';
  const notes = 'first line of notes\nsecond line of notes\n';
  writeFileSync(join(base, 'outside.txt'), `${secret}\n`);
  mkdirSync(join(cwd, 'src'), { recursive: true });
  writeFileSync(join(cwd, 'package.json'), '{\n  "name": "cli-test-workspace",\n  "private": true\n}\n');
  writeFileSync(join(cwd, 'notes.txt'), notes);
  writeFileSync(join(cwd, 'src', 'index.ts'), 'export const answer = 42;\n');
  symlinkSync(join(base, 'outside.txt'), join(cwd, 'link-out.txt'));
  symlinkSync(base, join(cwd, 'link-base'));
  return {
    base,
    cwd,
    outsideFile: join(base, 'outside.txt'),
    secret,
    notes,
    entries: ['link-base', 'link-out.txt', 'notes.txt', 'package.json', 'src/'],
    remove: () => rmSync(base, { recursive: true, force: true }),
  };
}

/** An echo DSL `tool_call:` line. */
export function toolCallLine(id: string, name: string, args: object): string {
  return `tool_call: ${JSON.stringify({ id, name, arguments: JSON.stringify(args) })}`;
}

/** Parses `--json` output: one object with a string `type` per line (throws naming a bad line). */
export function jsonEvents(stdout: string): Array<{ type: string } & Record<string, unknown>> {
  const lines = stdout.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines.map((line, index) => {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new Error(`stdout line ${index + 1} is not JSON: ${line}`);
    }
    if (typeof value !== 'object' || value === null || typeof (value as { type?: unknown }).type !== 'string') {
      throw new Error(`stdout line ${index + 1} has no string "type": ${line}`);
    }
    return value as { type: string } & Record<string, unknown>;
  });
}

/** Reads a JSONL session file as parsed lines. */
export function readJsonl(file: string): Array<Record<string, unknown>> {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}
