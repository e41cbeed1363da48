import { toolError, toolOk, type ToolReturnValue } from '@kosong/core';
import { SimpleToolset, type CallableTool } from '@kosong/toolset-simple';
import { constants, existsSync, type Dirent } from 'node:fs';
import { readdir, type FileHandle } from 'node:fs/promises';
import { relative, resolve } from 'node:path';
import { bashTool } from './bash-tool.js';
import { fileEditTools } from './file-edits.js';
import { searchTools } from './workspace-search.js';
import { calculate } from './calculator.js';
import { readTextFile } from './read-text-file.js';
import { defineStringArgumentTool } from './string-argument-tool.js';
import { PathEscapeError, openInside } from './workspace-path.js';

/** Options of {@link builtinToolset}. */
export interface BuiltinToolsOptions {
  /** The working directory: file tools see nothing outside it. */
  readonly cwd: string;
  /**
   * Offer the `bash` tool (off by default: it runs anything). Whether each call may run is decided
   * around the toolset: the CLI wraps it with `requireApproval` unless `--allow-bash`.
   */
  readonly offerBash?: boolean;
  /** Let `write_file` and `edit_file` change files without asking (default `false`: each call needs approval). */
  readonly allowEdits?: boolean;
}

/**
 * The CLI's tools: read a file, list a directory, calculate, and (only when allowed) run a bash
 * command (see {@link BuiltinToolsOptions.offerBash}). The file tools open what they are asked for first and check what they opened (see
 * `openInside`), so nothing outside the working directory can be reached, not even through a path
 * swapped for a symbolic link while the call runs.
 *
 * Also `grep` and `glob` (see `searchTools`), and `write_file` and `edit_file` (see
 * `fileEditTools`), whose calls each need approval unless {@link BuiltinToolsOptions.allowEdits}.
 *
 * The tools that only read declare the replay policy `'safe'`: a call of theirs interrupted by a
 * crash runs again when its step is completed. `bash`, `write_file` and `edit_file` declare none
 * (`'never'`): an interrupted call is never run again; the model is told it was interrupted and may
 * have run.
 */
export function builtinToolset(options: BuiltinToolsOptions): SimpleToolset {
  const { cwd } = options;
  const tools: CallableTool[] = [
    defineStringArgumentTool({
      name: 'read_file',
      description: 'Reads a UTF-8 text file inside the working directory.',
      parameters: { path: { description: 'Path relative to the working directory' } },
      replay: 'safe',
      execute: ({ path }) => withOpened(cwd, path, constants.O_RDONLY, (handle) => readTextFile(handle, path)),
    }),
    defineStringArgumentTool({
      name: 'list_directory',
      description: 'Lists the entries of a directory inside the working directory (directories end with /).',
      parameters: { path: { description: 'Path relative to the working directory', default: '.' } },
      replay: 'safe',
      execute: ({ path }) =>
        withOpened(cwd, path, constants.O_RDONLY | constants.O_DIRECTORY, async (handle) => {
          const entries = await readOpenedDirectory(handle, resolve(cwd, path));
          const names = entries.map((e) => (e.isDirectory() ? `${e.name}/` : e.name)).sort();
          return toolOk({ output: names.join('\n'), brief: `${names.length} ${names.length === 1 ? 'entry' : 'entries'} in ${relative(cwd, resolve(cwd, path)) || '.'}` });
        }),
    }),
    defineStringArgumentTool({
      name: 'calculate',
      description: 'Evaluates an arithmetic expression: numbers, + - * / % **, parentheses.',
      parameters: { expression: {} },
      replay: 'safe',
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
  tools.push(...searchTools(cwd), ...fileEditTools({ cwd, needsApproval: options.allowEdits !== true }));
  if (options.offerBash) tools.push(bashTool(cwd));
  return new SimpleToolset(tools, { name: 'builtin', maxOutputChars: 100_000 });
}

/**
 * The entries of the directory `handle` has open, read through the descriptor (`/proc/self/fd/N`),
 * not through the path again; where there is no `/proc`, through `path`.
 */
async function readOpenedDirectory(handle: FileHandle, path: string): Promise<Dirent[]> {
  try {
    return await readdir(`/proc/self/fd/${handle.fd}`, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || existsSync('/proc/self/fd')) throw error;
    return readdir(path, { withFileTypes: true });
  }
}

/** Opens `path` inside `cwd` and runs `use` on it (closing it after); refusals and missing paths are error results. */
async function withOpened(cwd: string, path: string, flags: number, use: (handle: FileHandle) => Promise<ToolReturnValue>): Promise<ToolReturnValue> {
  let handle: FileHandle;
  try {
    handle = await openInside(cwd, path, flags);
  } catch (error) {
    if (error instanceof PathEscapeError) return toolError({ message: error.message, brief: 'Outside the working directory' });
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return toolError({ message: `"${path}" does not exist`, brief: 'Not found' });
    if (code === 'ENOTDIR') return toolError({ message: `"${path}" is not a directory`, brief: 'Not a directory' });
    if (code === 'EISDIR') return toolError({ message: `"${path}" is a directory, not a file`, brief: 'Not a file' });
    throw error;
  }
  try {
    return await use(handle);
  } finally {
    await handle.close();
  }
}
