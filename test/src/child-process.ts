/**
 * Child processes for the specs that need real ones (a process killed mid-step, two processes on one
 * session): a node script started with arguments, its output as it comes, and a wait for a condition.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';

/** A running child: the process, everything it printed so far (stdout and stderr), and its exit code. */
export interface Child {
  readonly child: ChildProcessByStdio<null, Readable, Readable>;
  readonly output: () => string;
  readonly exited: Promise<number | null>;
}

/** Starts `node script ...args`. */
export function startNode(script: string, args: readonly string[]): Child {
  const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/** Resolves once `condition()` holds (checked every 10 ms); rejects after `ms` naming `what`. */
export async function until(condition: () => boolean, what: string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
