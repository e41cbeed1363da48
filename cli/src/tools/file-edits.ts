/**
 * The CLI's tools that change files: `write_file` and `edit_file`. Both are confined to the working
 * directory like `read_file`, refuse to go through a symbolic link, and replace a file atomically
 * (a new file beside it, synced, renamed over it): a crash or a full disk leaves the old file whole.
 *
 * @module
 */
import { toolError, toolOk, type JsonValue, type ToolCall, type ToolReturnValue } from '@kosong/core';
import type { ArgumentCheck, CallableTool } from '@kosong/toolset-simple';
import { checkArguments, type ArgumentKinds } from './argument-check.js';
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdir, rename, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join, relative } from 'node:path';
import { PathEscapeError, confine, openInside } from './workspace-path.js';

/** The largest file `edit_file` reads, and the largest content either tool writes (10 MiB). */
export const MAX_EDIT_BYTES = 10 * 1024 * 1024;

/** The tools of this module: the calls that change files. */
export const EDIT_TOOL_NAMES: readonly string[] = ['write_file', 'edit_file'];

/** Options of the file-editing tools. */
export interface FileEditOptions {
  /** The working directory: nothing outside it is written. */
  readonly cwd: string;
  /** Whether each call needs the user's approval (the CLI: unless `--allow-edits`). */
  readonly needsApproval: boolean;
}

/** The arguments of `write_file`. */
interface WriteArgs {
  readonly path: string;
  readonly content: string;
}

/** The arguments of `edit_file`. */
interface EditArgs {
  readonly path: string;
  readonly old_string: string;
  readonly new_string: string;
  readonly replace_all: boolean;
}

/** An edit that cannot be made: what the model is told. */
class EditRefused extends Error {
  constructor(
    message: string,
    readonly brief: string,
  ) {
    super(message);
  }
}

/** `write_file` and `edit_file` (see the module's description). */
export function fileEditTools(options: FileEditOptions): CallableTool[] {
  const { cwd } = options;
  const writeFile: CallableTool<WriteArgs> = {
    name: 'write_file',
    description: 'Writes a UTF-8 text file inside the working directory (created, or replaced whole). Parent directories are created.',
    parameters: {
      type: 'object',
      properties: { path: { type: 'string', description: 'Path relative to the working directory' }, content: { type: 'string', description: 'The whole new content' } },
      required: ['path', 'content'],
    },
    needsApproval: options.needsApproval,
    validate: (args) => checkArguments<WriteArgs>(args, WRITE_ARGUMENTS),
    execute: async ({ path, content }) =>
      refusalsAsErrors(async () => {
        checkSize(content, 'content');
        const { created } = await replaceFile(cwd, path, content, true);
        const lines = content === '' ? 0 : content.split('\n').length;
        return toolOk({ output: `${created ? 'Created' : 'Wrote'} ${path} (${lines} ${lines === 1 ? 'line' : 'lines'})`, brief: `${created ? 'Created' : 'Wrote'} ${path}` });
      }),
  };
  const editFile: CallableTool<EditArgs> = {
    name: 'edit_file',
    description:
      'Replaces an exact string in a UTF-8 text file inside the working directory. old_string must occur exactly once (give more context to make it unique), ' +
      'or set replace_all to replace every occurrence.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'Path relative to the working directory' },
        old_string: { type: 'string', description: 'The exact text to replace' },
        new_string: { type: 'string', description: 'The text to put in its place' },
        replace_all: { type: 'boolean', description: 'Replace every occurrence (default false)' },
      },
      required: ['path', 'old_string', 'new_string'],
    },
    needsApproval: options.needsApproval,
    validate: (args) => editArguments(args),
    execute: async (args) =>
      refusalsAsErrors(async () => {
        const edit = await plannedEdit(cwd, args);
        await replaceFile(cwd, args.path, edit.after, false);
        return toolOk({ output: `Edited ${args.path}: ${edit.count} ${edit.count === 1 ? 'replacement' : 'replacements'}\n${edit.diff}`, brief: `Edited ${args.path}` });
      }),
  };
  return [writeFile as CallableTool, editFile as CallableTool];
}

/**
 * What a call of `write_file` or `edit_file` would change, as a unified diff (for the approval
 * question), or why it cannot be made; `undefined` for any other call.
 */
export async function editPreview(cwd: string, call: ToolCall): Promise<string | undefined> {
  const name = call.function.name;
  if (name !== 'write_file' && name !== 'edit_file') return undefined;
  let parsed: JsonValue;
  try {
    parsed = JSON.parse(call.function.arguments ?? '{}') as JsonValue;
  } catch {
    return undefined;
  }
  try {
    if (name === 'edit_file') {
      const checked = editArguments(parsed);
      return checked.ok ? (await plannedEdit(cwd, checked.value)).diff : undefined;
    }
    const checked = checkArguments<WriteArgs>(parsed, WRITE_ARGUMENTS);
    if (!checked.ok) return undefined;
    checkSize(checked.value.content, 'content');
    const before = await currentText(cwd, checked.value.path).catch((error: unknown) => {
      if (error instanceof EditRefused && error.brief === 'Not found') return '';
      throw error;
    });
    return await unifiedDiff(checked.value.path, before, checked.value.content);
  } catch (error) {
    return error instanceof EditRefused || error instanceof PathEscapeError ? `(the call will fail: ${error.message})` : undefined;
  }
}

/** The edit a call asks for, checked against the file as it is now. */
async function plannedEdit(cwd: string, args: EditArgs): Promise<{ readonly after: string; readonly count: number; readonly diff: string }> {
  const { path, old_string: from, new_string: to, replace_all: all } = args;
  if (from === '') throw new EditRefused('old_string is empty: give the exact text to replace (use write_file to write a whole file)', 'Nothing to replace');
  if (from === to) throw new EditRefused('old_string and new_string are the same: nothing would change', 'Nothing to change');
  checkSize(to, 'new_string');
  const before = await currentText(cwd, path);
  const count = occurrences(before, from);
  if (count === 0) throw new EditRefused(`old_string was not found in ${path} (it must match exactly, whitespace included)`, 'Not found in file');
  if (count > 1 && !all) {
    throw new EditRefused(`old_string occurs ${count} times in ${path}: give more surrounding text to make it unique, or set replace_all`, 'Not unique');
  }
  const after = all ? before.split(from).join(to) : before.replace(from, () => to);
  if (Buffer.byteLength(after) > MAX_EDIT_BYTES) throw new EditRefused(`the edited file would be over ${MAX_EDIT_BYTES} bytes`, 'Too large');
  return { after, count: all ? count : 1, diff: await unifiedDiff(path, before, after) };
}

function occurrences(text: string, part: string): number {
  let count = 0;
  for (let at = text.indexOf(part); at !== -1; at = text.indexOf(part, at + part.length)) count++;
  return count;
}

/** The unified diff of a change (`diff` loaded on first use: not on the CLI's start). */
async function unifiedDiff(path: string, before: string, after: string): Promise<string> {
  const { createTwoFilesPatch } = await import('diff');
  return createTwoFilesPatch(`a/${path}`, `b/${path}`, before, after, undefined, undefined, { context: 3 }).split('\n').slice(1).join('\n').trimEnd();
}

function checkSize(text: string, what: string): void {
  if (text.length > MAX_EDIT_BYTES || Buffer.byteLength(text) > MAX_EDIT_BYTES) throw new EditRefused(`${what} is over ${MAX_EDIT_BYTES} bytes`, 'Too large');
}

/** The text of the file at `path` inside `cwd`: a regular file (not a link), UTF-8, not binary, at most {@link MAX_EDIT_BYTES}. */
async function currentText(cwd: string, path: string): Promise<string> {
  await refuseLink(cwd, path);
  let handle: FileHandle;
  try {
    handle = await openInside(cwd, path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    throw openFailure(error, path);
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new EditRefused(`"${path}" is not a regular file`, 'Not a file');
    if (info.size > MAX_EDIT_BYTES) throw new EditRefused(`"${path}" is over ${MAX_EDIT_BYTES} bytes: too large to edit`, 'Too large');
    const bytes = await handle.readFile();
    if (bytes.subarray(0, 8192).includes(0)) throw new EditRefused(`"${path}" is a binary file: only text files are edited`, 'Binary file');
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      throw new EditRefused(`"${path}" is not UTF-8 text`, 'Not UTF-8');
    }
  } finally {
    await handle.close();
  }
}

/** Refuses a path whose last component is a symbolic link (a missing path is fine: it is created). */
async function refuseLink(cwd: string, path: string): Promise<void> {
  const target = await confine(cwd, path);
  try {
    if ((await lstat(target)).isSymbolicLink()) throw new EditRefused(`"${path}" is a symbolic link: files are not changed through links`, 'Symbolic link');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

/**
 * Replaces the file at `path` inside `cwd` with `content`: a new file beside it (created
 * exclusively, checked to be inside `cwd` by its descriptor, synced), renamed over it, keeping its
 * permission bits. `create`: a missing file (and its parent directories) is created; otherwise it
 * must exist.
 */
async function replaceFile(cwd: string, path: string, content: string, create: boolean): Promise<{ readonly created: boolean }> {
  await refuseLink(cwd, path);
  const target = await confine(cwd, path);
  let mode = 0o644;
  let created = false;
  try {
    const info = await lstat(target);
    if (!info.isFile()) throw new EditRefused(`"${path}" is not a regular file`, 'Not a file');
    mode = info.mode & 0o7777;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    if (!create) throw new EditRefused(`"${path}" does not exist`, 'Not found');
    created = true;
    await mkdir(dirname(target), { recursive: true });
    await confine(cwd, relative(cwd, dirname(target)) || '.'); // what was made is still inside
  }
  const temp = join(dirname(target), `.${basename(target)}.kosong-${randomBytes(6).toString('hex')}.tmp`);
  const handle = await openInside(cwd, relative(cwd, temp), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW).catch((error: unknown) => {
    throw openFailure(error, path);
  });
  try {
    try {
      await handle.chmod(mode);
      await handle.writeFile(content, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, target);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    if ((error as NodeJS.ErrnoException).code === 'ENOSPC') throw new EditRefused(`the disk is full: "${path}" was not changed`, 'Disk full');
    throw error;
  }
  return { created };
}

function openFailure(error: unknown, path: string): unknown {
  if (error instanceof PathEscapeError || error instanceof EditRefused) return error;
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return new EditRefused(`"${path}" does not exist`, 'Not found');
  if (code === 'ELOOP') return new EditRefused(`"${path}" is a symbolic link: files are not changed through links`, 'Symbolic link');
  if (code === 'EISDIR') return new EditRefused(`"${path}" is a directory, not a file`, 'Not a file');
  if (code === 'EACCES' || code === 'EPERM') return new EditRefused(`"${path}" cannot be written (permission denied)`, 'Permission denied');
  return error;
}

/** Runs a tool's work; a refusal (and a path outside the working directory) is an error result. */
async function refusalsAsErrors(run: () => Promise<ToolReturnValue>): Promise<ToolReturnValue> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof EditRefused) return toolError({ message: error.message, brief: error.brief });
    if (error instanceof PathEscapeError) return toolError({ message: error.message, brief: 'Outside the working directory' });
    throw error;
  }
}

const WRITE_ARGUMENTS: ArgumentKinds = { strings: ['path', 'content'] };
const EDIT_ARGUMENTS: ArgumentKinds = { strings: ['path', 'old_string', 'new_string'], booleans: ['replace_all'] };

function editArguments(args: JsonValue): ArgumentCheck<EditArgs> {
  const checked = checkArguments<Omit<EditArgs, 'replace_all'> & { readonly replace_all?: boolean }>(args, EDIT_ARGUMENTS);
  return checked.ok ? { ok: true, value: { ...checked.value, replace_all: checked.value.replace_all === true } } : checked;
}
