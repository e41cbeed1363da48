import { toolError, toolOk, type ToolReturnValue } from '@kosong/core';
import type { CallableTool } from '@kosong/toolset-simple';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { signalMarkedProcesses } from './marked-processes.js';
import { OutputCapture } from './output-capture.js';
import { defineStringArgumentTool } from './string-argument-tool.js';

/** The environment variable that marks every process a bash run starts, with the run's id. */
export const BASH_RUN_VARIABLE = 'KOSONG_BASH_RUN';
/**
 * The environment variable that gives a command its call's idempotency key (`ToolContext.idempotencyKey`:
 * the same when an interrupted step is completed), for the APIs it calls: `curl -H "Idempotency-Key: $KOSONG_IDEMPOTENCY_KEY" …`.
 */
export const IDEMPOTENCY_KEY_VARIABLE = 'KOSONG_IDEMPOTENCY_KEY';
/** Bytes kept of the start and of the end of a command's output (the middle is counted, not kept). */
export const BASH_OUTPUT_HEAD_BYTES = 32 * 1024;
export const BASH_OUTPUT_TAIL_BYTES = 32 * 1024;
/** How long an aborted command gets to end after SIGTERM before it gets SIGKILL. */
const KILL_GRACE_MS = 2_000;

/** A bash command running now: its process group, and the id every process it started carries. */
interface BashRun {
  readonly id: string;
  group: number | undefined;
}

/**
 * The `bash` tool: runs `bash -c command` in the working directory and returns its output and exit
 * code. Output is kept bounded (the first and last 32 KiB, with a line saying how much was cut in
 * between), so a command that never stops writing (`yes`) cannot exhaust the CLI's memory.
 *
 * The command runs in a process group of its own, with {@link BASH_RUN_VARIABLE} set to an id of
 * its run in its environment (and {@link IDEMPOTENCY_KEY_VARIABLE} to its call's idempotency key). The step's abort signal (Ctrl-C, the tool's timeout) stops the group
 * and every process that carries the id — also those that left the group or the session (`setsid`,
 * daemons) — with SIGTERM, then SIGKILL after a grace period; the call then ends as soon as bash has
 * exited, without waiting for pipes that escaped processes might hold. What still runs when the CLI
 * exits (a second Ctrl-C) gets SIGKILL.
 */
export function bashTool(cwd: string): CallableTool {
  return defineStringArgumentTool({
    name: 'bash',
    description: 'Runs a bash command in the working directory and returns its output and exit code.',
    parameters: { command: {} },
    timeoutMs: 60_000,
    execute: ({ command }, { signal, idempotencyKey }) =>
      new Promise<ToolReturnValue>((resolve) => {
        const run: BashRun = { id: `${process.pid}-${randomUUID()}`, group: undefined };
        const child = spawn('bash', ['-c', command], {
          cwd,
          detached: true,
          stdio: ['ignore', 'pipe', 'pipe'],
          env: { ...process.env, [BASH_RUN_VARIABLE]: run.id, ...(idempotencyKey === undefined ? {} : { [IDEMPOTENCY_KEY_VARIABLE]: idempotencyKey }) },
        });
        run.group = child.pid;
        track(run);
        const output = new OutputCapture(BASH_OUTPUT_HEAD_BYTES, BASH_OUTPUT_TAIL_BYTES);
        child.stdout.on('data', (chunk: Buffer) => output.write(chunk));
        child.stderr.on('data', (chunk: Buffer) => output.write(chunk));

        let done = false;
        let exited = false;
        let aborted = false;
        let forceKill: NodeJS.Timeout | undefined;
        const finish = (value: ToolReturnValue): void => {
          if (done) return;
          done = true;
          signal.removeEventListener('abort', stop);
          if (!aborted) untrack(run);
          resolve(value);
        };
        // After an abort nothing more is read: the pipes are let go, whoever may still hold them.
        const finishStopped = (): void => {
          child.stdout.destroy();
          child.stderr.destroy();
          finish(toolError({ message: 'bash was stopped', brief: 'Stopped', output: output.text() }));
        };
        const stop = (): void => {
          if (aborted || done) return;
          aborted = true;
          stopRun(run, 'SIGTERM');
          forceKill = setTimeout(() => {
            stopRun(run, 'SIGKILL');
            untrack(run);
          }, KILL_GRACE_MS);
          forceKill.unref(); // if the CLI exits first, its exit handler sends the SIGKILL
          if (exited) finishStopped();
        };
        signal.addEventListener('abort', stop, { once: true });
        if (signal.aborted) stop();

        child.on('error', (error) => finish(toolError({ message: `bash failed: ${error.message}`, brief: 'bash failed', output: output.text() })));
        child.on('exit', () => {
          exited = true;
          if (aborted) finishStopped();
        });
        child.on('close', (code, killedBy) => {
          if (aborted) return finishStopped();
          const text = output.text();
          if (killedBy) finish(toolError({ message: `bash was stopped (${killedBy})`, brief: 'Stopped', output: text }));
          else if (code === 0) finish(toolOk({ output: text, brief: `$ ${command}` }));
          else finish(toolError({ message: `bash exited with code ${code}`, brief: `Exit ${code}`, output: text }));
        });
      }),
  });
}

/** The runs that may have processes alive: the exit handler kills what is left of them. */
const runs = new Set<BashRun>();

function track(run: BashRun): void {
  if (runs.size === 0) process.on('exit', killEverything);
  runs.add(run);
}

function untrack(run: BashRun): void {
  runs.delete(run);
  if (runs.size === 0) process.off('exit', killEverything);
}

function killEverything(): void {
  for (const run of runs) stopRun(run, 'SIGKILL');
}

/** Signals the run's process group and every process carrying its id. */
function stopRun(run: BashRun, signal: NodeJS.Signals): void {
  if (run.group !== undefined) {
    try {
      process.kill(-run.group, signal);
    } catch {
      // the group is gone already
    }
  }
  signalMarkedProcesses(BASH_RUN_VARIABLE, run.id, signal);
}
