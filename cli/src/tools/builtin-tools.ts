import { toolError, toolOk, type ToolReturnValue } from '@kosong/core';
import { SimpleToolset, defineTool, type CallableTool } from '@kosong/toolset-simple';
import { spawn } from 'node:child_process';
import { readdir, readFile, stat } from 'node:fs/promises';
import { relative } from 'node:path';
import { z } from 'zod';
import { calculate } from './calculator.js';
import { PathEscapeError, confine } from './workspace-path.js';

/** Options of {@link builtinToolset}. */
export interface BuiltinToolsOptions {
  /** The working directory: file tools see nothing outside it. */
  readonly cwd: string;
  /** Offer the `bash` tool (off by default: it runs anything). */
  readonly allowBash?: boolean;
}

const MAX_FILE_BYTES = 256 * 1024;

/** The CLI's tools: read a file, list a directory, calculate, and (only when allowed) run a bash command. */
export function builtinToolset(options: BuiltinToolsOptions): SimpleToolset {
  const { cwd } = options;
  const tools: CallableTool[] = [
    defineTool({
      name: 'read_file',
      description: 'Reads a UTF-8 text file inside the working directory.',
      parameters: z.object({ path: z.string().describe('Path relative to the working directory') }),
      execute: ({ path }) =>
        insideCwd(cwd, path, async (file) => {
          const info = await stat(file);
          if (!info.isFile()) return toolError({ message: `"${path}" is not a file`, brief: 'Not a file' });
          if (info.size > MAX_FILE_BYTES) {
            return toolError({ message: `"${path}" is ${info.size} bytes; read_file reads files up to ${MAX_FILE_BYTES}`, brief: 'File too large' });
          }
          const text = await readFile(file, 'utf8');
          return toolOk({ output: text, brief: `Read ${path} (${text.split('\n').length} lines)` });
        }),
    }),
    defineTool({
      name: 'list_directory',
      description: 'Lists the entries of a directory inside the working directory (directories end with /).',
      parameters: z.object({ path: z.string().default('.').describe('Path relative to the working directory') }),
      execute: ({ path }) =>
        insideCwd(cwd, path, async (dir) => {
          const entries = await readdir(dir, { withFileTypes: true });
          const names = entries.map((e) => (e.isDirectory() ? `${e.name}/` : e.name)).sort();
          return toolOk({ output: names.join('\n'), brief: `${names.length} entries in ${relative(cwd, dir) || '.'}` });
        }),
    }),
    defineTool({
      name: 'calculate',
      description: 'Evaluates an arithmetic expression: numbers, + - * / % **, parentheses.',
      parameters: z.object({ expression: z.string() }),
      execute: ({ expression }) => {
        try {
          const value = calculate(expression);
          return toolOk({ output: String(value), brief: `${expression} = ${value}` });
        } catch (error) {
          return toolError({ message: (error as Error).message, brief: 'Cannot calculate' });
        }
      },
    }),
  ];
  if (options.allowBash) tools.push(bashTool(cwd));
  return new SimpleToolset(tools, { name: 'builtin', maxOutputChars: 100_000 });
}

/**
 * Runs `bash -c command` in the working directory, in a process group of its own. The step's abort
 * signal (Ctrl-C, the tool's timeout) stops the whole group — the command and every process it
 * started, not only bash, whose orphans would keep running and hold the output pipes (and with
 * them the CLI) open — with SIGTERM, then SIGKILL if it is still there after a grace period. Groups
 * still running when the CLI exits (a second Ctrl-C) are killed too.
 */
function bashTool(cwd: string): CallableTool {
  return defineTool({
    name: 'bash',
    description: 'Runs a bash command in the working directory and returns its output and exit code.',
    parameters: z.object({ command: z.string() }),
    timeoutMs: 60_000,
    execute: ({ command }, { signal }) =>
      new Promise<ToolReturnValue>((resolve) => {
        const child = spawn('bash', ['-c', command], { cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
        const group = child.pid;
        let forceKill: NodeJS.Timeout | undefined;
        const stop = (): void => {
          if (group === undefined || forceKill) return;
          killGroup(group, 'SIGTERM');
          forceKill = setTimeout(() => killGroup(group, 'SIGKILL'), KILL_GRACE_MS);
        };
        if (group !== undefined) trackGroup(group);
        signal.addEventListener('abort', stop, { once: true });
        if (signal.aborted) stop();
        const finish = (value: ToolReturnValue): void => {
          signal.removeEventListener('abort', stop);
          clearTimeout(forceKill);
          if (group !== undefined) untrackGroup(group);
          resolve(value);
        };
        let output = '';
        child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
        child.on('error', (error) => finish(toolError({ message: `bash failed: ${error.message}`, brief: 'bash failed', output })));
        child.on('close', (code, killedBy) => {
          if (killedBy) finish(toolError({ message: `bash was stopped (${killedBy})`, brief: 'Stopped', output }));
          else if (code === 0) finish(toolOk({ output, brief: `$ ${command}` }));
          else finish(toolError({ message: `bash exited with code ${code}`, brief: `Exit ${code}`, output }));
        });
      }),
  });
}

/** How long an aborted command gets to end after SIGTERM before its group gets SIGKILL. */
const KILL_GRACE_MS = 2_000;

/** Process groups of the bash commands running now. */
const runningGroups = new Set<number>();

function killRunningGroups(): void {
  for (const group of runningGroups) killGroup(group, 'SIGKILL');
}

function trackGroup(group: number): void {
  if (runningGroups.size === 0) process.on('exit', killRunningGroups);
  runningGroups.add(group);
}

function untrackGroup(group: number): void {
  runningGroups.delete(group);
  if (runningGroups.size === 0) process.off('exit', killRunningGroups);
}

function killGroup(group: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-group, signal);
  } catch {
    // the group is gone already
  }
}

async function insideCwd(cwd: string, path: string, use: (resolved: string) => Promise<ToolReturnValue>): Promise<ToolReturnValue> {
  let resolved: string;
  try {
    resolved = await confine(cwd, path);
  } catch (error) {
    if (error instanceof PathEscapeError) return toolError({ message: error.message, brief: 'Outside the working directory' });
    throw error;
  }
  try {
    return await use(resolved);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return toolError({ message: `"${path}" does not exist`, brief: 'Not found' });
    if (code === 'ENOTDIR') return toolError({ message: `"${path}" is not a directory`, brief: 'Not a directory' });
    throw error;
  }
}
