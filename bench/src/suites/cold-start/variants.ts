/**
 * Variants of the `cold-start` suite: each timed run starts one whole Node process (the same Node as
 * the measuring process) and waits for it to exit. Before the timed runs, an untimed counting pass
 * runs the command once more with a module counter preloaded (`count-modules.ts`).
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PreparedVariant } from '../../harness.js';

/** A command to start: Node's arguments, where, and what its output must contain. */
export interface ColdCommand {
  readonly args: readonly string[];
  readonly cwd: string;
  /** A pattern stdout must match (checked after every run). */
  readonly expect?: RegExp;
}

interface Exit {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function start(command: ColdCommand, env: NodeJS.ProcessEnv = process.env, preload: readonly string[] = []): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...preload, ...command.args], { cwd: command.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Runs `command` once with the module counter preloaded; returns how many ES and CommonJS modules it loaded. */
async function countModules(command: ColdCommand): Promise<{ readonly esm: number; readonly cjs: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'kosong-cold-start-'));
  const file = join(dir, 'modules.txt');
  try {
    const counter = new URL('./count-modules.js', import.meta.url).href;
    const exit = await start(command, { ...process.env, KOSONG_BENCH_MODULE_COUNT: file }, ['--import', counter]);
    check(command, exit);
    const lines = readFileSync(file, 'utf8').split('\n');
    const esm = new Set(lines.filter((line) => line.startsWith('esm ')).map((line) => line.slice(4))).size;
    const cjs = Number(lines.find((line) => line.startsWith('cjs '))?.slice(4) ?? NaN);
    return { esm, cjs };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function check(command: ColdCommand, exit: Exit): void {
  const shown = `node ${command.args.join(' ')}`;
  if (exit.code !== 0) throw new Error(`${shown} exited with ${exit.code}: ${exit.stderr.slice(0, 500)}`);
  if (command.expect && !command.expect.test(exit.stdout)) throw new Error(`${shown} printed ${JSON.stringify(exit.stdout.slice(0, 300))}, expected ${command.expect}`);
}

/** A variant that starts `command` in each run; reports the modules it loads. */
export async function prepareCommand(command: ColdCommand): Promise<PreparedVariant<Exit>> {
  const modules = await countModules(command);
  return {
    run: () => start(command),
    verify: (exit) => check(command, exit),
    measure: () => ({ esModules: modules.esm, cjsModules: modules.cjs }),
  };
}
