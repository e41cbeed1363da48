import { constants } from 'node:fs';
import { open, readlink, realpath, stat, type FileHandle } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';

/** A path a tool was asked for lies outside the working directory. */
export class PathEscapeError extends Error {
  constructor(readonly requested: string) {
    super(`Path "${requested}" is outside the working directory; only paths inside it are allowed.`);
    this.name = 'PathEscapeError';
  }
}

/**
 * Resolves `requested` inside `root`, following symbolic links, and refuses anything that ends up
 * outside it (`..`, absolute paths elsewhere, links pointing out). A path that does not exist yet is
 * checked by its nearest existing parent.
 *
 * @throws {PathEscapeError}
 */
export async function confine(root: string, requested: string): Promise<string> {
  const realRoot = await realpath(root);
  const target = resolve(realRoot, requested);
  if (!inside(realRoot, target)) throw new PathEscapeError(requested);
  const real = await realpathOfNearest(target);
  if (!inside(realRoot, real)) throw new PathEscapeError(requested);
  return target;
}

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

async function realpathOfNearest(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    const parent = resolve(path, '..');
    if (parent === path) return path;
    const realParent = await realpathOfNearest(parent);
    return resolve(realParent, relative(parent, path));
  }
}

/**
 * Opens `requested` inside `root` for reading, and checks what was opened, not only the path: the
 * real path of the open descriptor (`/proc/self/fd/N`) must be inside `root`. A path swapped for a
 * symbolic link to the outside between a check and the open therefore cannot lead out: the caller
 * reads from the descriptor it got. Opens without blocking (a FIFO does not hang the open).
 *
 * Where `/proc` is missing, the descriptor's file is compared (device and inode) with what the
 * path's real location holds after the open.
 *
 * @throws {PathEscapeError} when the path, or what was opened, is outside `root`; the error of
 *   `open` (e.g. `ENOENT`) otherwise.
 */
export async function openInside(root: string, requested: string, flags = constants.O_RDONLY): Promise<FileHandle> {
  const realRoot = await realpath(root);
  const path = await confine(root, requested);
  const handle = await open(path, flags | constants.O_NONBLOCK | constants.O_NOCTTY);
  try {
    const opened = await openedPath(handle, path);
    if (opened === undefined || !inside(realRoot, opened)) throw new PathEscapeError(requested);
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/**
 * The real path of what `handle` has open (`path`: how it was opened, for the fallback), or
 * `undefined` when it cannot be told (the path names something else by now).
 */
async function openedPath(handle: FileHandle, path: string): Promise<string | undefined> {
  try {
    return await readlink(`/proc/self/fd/${handle.fd}`);
  } catch {
    const real = await realpath(path);
    const [opened, named] = await Promise.all([handle.stat(), stat(real)]);
    return opened.dev === named.dev && opened.ino === named.ino ? real : undefined;
  }
}
