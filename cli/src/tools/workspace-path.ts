import { realpath } from 'node:fs/promises';
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
