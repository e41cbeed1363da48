import { constants } from 'node:fs';
import { open, stat, unlink, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { checkOwnFile, fileState, NO_FOLLOW, sameFile, fileOpenError, type FileState } from './append-only-file.js';
import { ContextFileError } from './context-errors.js';

/** A history file as read: its bytes and which file they came from. */
export interface HistoryFileContent {
  readonly bytes: Buffer;
  readonly state: FileState;
}

/**
 * Reads a whole history file, without changing it.
 *
 * @returns `null` if there is no file yet (its directory exists: the file can be created).
 * @throws ContextFileError `missing-directory` when the directory does not exist, `not-a-file` when
 *   the path is a directory, a device, a pipe, …; the system's error otherwise.
 */
export async function readHistoryFile(path: string): Promise<HistoryFileContent | null> {
  let handle: FileHandle;
  try {
    // Non-blocking: opening a named pipe must not wait for a writer (it is refused below).
    handle = await open(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | NO_FOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'EMLINK' || code === 'EACCES' || code === 'EPERM') throw fileOpenError(path, error);
    if (code === 'ENOENT' && (await isDirectory(dirname(path)))) return null;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw new ContextFileError(path, 'missing-directory', `the directory ${dirname(path)} does not exist, so the file cannot be created`, { cause: error });
    }
    throw error;
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw new ContextFileError(path, 'not-a-file', `not a regular file (${kindOf(stats)})`);
    checkOwnFile(path, stats);
    return { bytes: await handle.readFile(), state: fileState(stats) };
  } finally {
    await handle.close();
  }
}

/**
 * Saves a torn tail beside the history file, as `<name>.torn-<UTC time>` (never overwriting a file),
 * synced to disk; returns its path.
 */
export async function keepTornTail(path: string, tail: Uint8Array): Promise<string> {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  for (let attempt = 1; ; attempt++) {
    const target = `${path}.torn-${stamp}${attempt === 1 ? '' : `-${attempt}`}`;
    let handle: FileHandle;
    try {
      handle = await open(target, 'wx');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST' && attempt < 100) continue;
      throw fileOpenError(path, error);
    }
    try {
      await handle.writeFile(tail);
      await handle.sync();
    } catch (error) {
      // Disk full, say: no half-written copy is left behind, and the history file is not cut.
      await handle.close();
      await unlink(target).catch(() => undefined);
      throw new ContextFileError(path, 'write-failed', `could not keep the torn last line beside the file (${(error as Error).message}); the file was left as it was`, { cause: error });
    }
    await handle.close();
    await syncDirectory(dirname(path));
    return target;
  }
}

/**
 * Cuts the history file back to `length` bytes, provided it is still the file `read` describes.
 *
 * @throws ContextFileError `file-replaced` / `file-changed` if it is not.
 */
export async function cutHistoryFile(path: string, read: FileState, length: number): Promise<void> {
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_RDWR | NO_FOLLOW);
  } catch (error) {
    throw fileOpenError(path, error);
  }
  try {
    const now = fileState(await handle.stat());
    if (!sameFile(now, read)) throw new ContextFileError(path, 'file-replaced', 'the file was replaced while it was being restored');
    if (now.size !== read.size) throw new ContextFileError(path, 'file-changed', 'the file changed while it was being restored: something else writes to it');
    await handle.truncate(length);
    await handle.datasync();
  } finally {
    await handle.close();
  }
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/** Makes a new directory entry durable (best effort: not every platform can open a directory). */
async function syncDirectory(path: string): Promise<void> {
  try {
    const handle = await open(path, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // the file itself is synced; only a power cut right now could lose its name
  }
}

function kindOf(stats: { isDirectory(): boolean; isFIFO(): boolean; isCharacterDevice(): boolean; isBlockDevice(): boolean; isSocket(): boolean }): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a named pipe';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  if (stats.isSocket()) return 'a socket';
  return 'not a file';
}
