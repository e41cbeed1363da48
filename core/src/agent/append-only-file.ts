import { constants, type BigIntStats, type Stats } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import { ContextFileError } from './context-errors.js';

/** Which file a path or a handle is, and how long it is. */
export interface FileState {
  readonly dev: number;
  readonly ino: number;
  readonly size: number;
}

/** The {@link FileState} of `stats`. */
export function fileState(stats: Stats | BigIntStats): FileState {
  return { dev: Number(stats.dev), ino: Number(stats.ino), size: Number(stats.size) };
}

/** Flags that never follow a symbolic link at the end of the path (O_NOFOLLOW: a link fails with ELOOP). */
export const NO_FOLLOW: number = constants.O_NOFOLLOW ?? 0;

/**
 * Refuses a file a session must not use: one with other hard links (another name for someone
 * else's file) or one another user owns. (Symbolic links are refused by opening with {@link NO_FOLLOW}.)
 *
 * @throws ContextFileError `unsafe-file`.
 */
export function checkOwnFile(path: string, stats: Stats): void {
  if (stats.nlink > 1) {
    throw new ContextFileError(path, 'unsafe-file', `the file has ${stats.nlink} hard links: another name may be someone else's file, so the session does not use it`);
  }
  const uid = process.getuid?.();
  if (uid !== undefined && stats.uid !== uid) {
    throw new ContextFileError(path, 'unsafe-file', `the file belongs to another user (uid ${stats.uid}), so the session does not use it`);
  }
}

/**
 * The error of opening a history file, as a `ContextFileError` where it says something about the
 * file: a symbolic link (`unsafe-file`), no permission or a read-only file system (`no-access`);
 * otherwise `error` itself.
 */
export function fileOpenError(path: string, error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ELOOP' || code === 'EMLINK') {
    return new ContextFileError(path, 'unsafe-file', 'the path is a symbolic link: a session never reads or writes a file through one', { cause: error });
  }
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') {
    const why = code === 'EROFS' ? 'the file system is read-only' : 'permission denied';
    return new ContextFileError(path, 'no-access', `cannot open the file (${why})`, { cause: error });
  }
  return error;
}

/** Whether two states name the same file. */
export function sameFile(a: FileState, b: FileState): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

/**
 * A file that only grows by whole appends: each {@link AppendOnlyFile.append} reaches the disk
 * completely (short writes are continued, then synced) or not at all (the file is cut back to where
 * it was), and it only ever writes into the file that is still at its path, at the length this
 * writer left it.
 */
export class AppendOnlyFile {
  /** Set when a failed append could not be undone: the file must be restored before it is written again. */
  private damaged: ContextFileError | undefined;
  /** Whether bytes were appended without a sync since the last synced append. */
  private unsynced = false;

  private constructor(
    readonly path: string,
    private readonly handle: FileHandle,
    private readonly identity: FileState,
    private size: number,
  ) {}

  /**
   * Opens (creating it if needed) the file for appending.
   *
   * @param expected - the file as last seen (e.g. by a restore): `null` if it did not exist. If it is
   *   now another file or another length, the open fails (`file-replaced` / `file-changed`).
   * @throws ContextFileError (`missing-directory`, `not-a-file`, `file-replaced`, `file-changed`).
   */
  static async open(path: string, expected?: FileState | null): Promise<AppendOnlyFile> {
    let handle: FileHandle;
    try {
      handle = await open(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | NO_FOLLOW, 0o600);
    } catch (error) {
      throw openError(path, error);
    }
    try {
      const stats = await handle.stat();
      if (!stats.isFile()) throw new ContextFileError(path, 'not-a-file', 'not a regular file');
      checkOwnFile(path, stats);
      const state = fileState(stats);
      if (expected !== undefined) {
        if (expected !== null && !sameFile(expected, state)) {
          throw new ContextFileError(path, 'file-replaced', 'the file was replaced since it was read; refusing to write into another file');
        }
        const expectedSize = expected?.size ?? 0;
        if (state.size !== expectedSize) {
          throw new ContextFileError(path, 'file-changed', `the file is ${state.size} bytes long, but was ${expectedSize} when it was read: something else writes to it`);
        }
      }
      return new AppendOnlyFile(path, handle, state, state.size);
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /**
   * Appends `bytes` and syncs them to disk (unless `sync` is false: then a later synced append, or
   * the system, does; a process crash loses nothing written, a power cut may). On failure the file is cut back to its length before
   * this call, and the call rejects.
   *
   * @throws ContextFileError: `file-replaced` (renamed, deleted or replaced since it was opened),
   *   `file-changed` (written or truncated by something else), `write-failed` (disk full, file size
   *   limit, I/O error; the file is as it was, unless the message says it could not be cut back).
   */
  async append(bytes: Uint8Array, sync = true): Promise<void> {
    if (this.damaged) throw this.damaged;
    await this.checkStillOurs();
    let written = 0;
    try {
      while (written < bytes.length) {
        const { bytesWritten } = await this.handle.write(bytes, written, bytes.length - written);
        if (bytesWritten <= 0) throw new Error(`the system wrote nothing of the remaining ${bytes.length - written} bytes`);
        written += bytesWritten;
      }
      if (sync) await this.handle.datasync();
    } catch (error) {
      throw await this.undo(error, written, bytes.length);
    }
    this.size += bytes.length;
    this.unsynced = !sync;
  }

  /** The file and its length as this writer left it. */
  get state(): FileState {
    return { ...this.identity, size: this.size };
  }

  /** Syncs what was appended without a sync (nothing when there is none). */
  async sync(): Promise<void> {
    if (!this.unsynced) return;
    await this.handle.datasync();
    this.unsynced = false;
  }

  /** Syncs what was appended without a sync, then closes the file (closed even if the sync fails). */
  async close(): Promise<void> {
    try {
      await this.sync();
    } finally {
      await this.handle.close();
    }
  }

  private async checkStillOurs(): Promise<void> {
    let current: FileState;
    try {
      current = fileState(await stat(this.path));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        throw new ContextFileError(this.path, 'file-replaced', 'the file was renamed or deleted since it was opened; refusing to write into it', { cause: error });
      }
      throw new ContextFileError(this.path, 'write-failed', `cannot check the file before writing: ${(error as Error).message}`, { cause: error });
    }
    if (!sameFile(current, this.identity)) {
      throw new ContextFileError(this.path, 'file-replaced', 'the file was renamed or replaced since it was opened; refusing to write into another file');
    }
    if (current.size !== this.size) {
      throw new ContextFileError(
        this.path,
        'file-changed',
        `the file is ${current.size} bytes long, but this context left it at ${this.size}: something else writes to it; refusing to append`,
      );
    }
  }

  /** Cuts the file back after a failed append; returns the error to throw. */
  private async undo(error: unknown, written: number, total: number): Promise<ContextFileError> {
    const what = `${describeIoError(error)} after ${written} of ${total} bytes`;
    try {
      await this.handle.truncate(this.size);
      await this.handle.datasync();
    } catch (undoError) {
      this.damaged = new ContextFileError(
        this.path,
        'write-failed',
        `an append failed (${what}) and the file could not be cut back to its last whole record (${describeIoError(undoError)}); ` +
          'restore it (the torn tail is then cut off and kept beside it) before writing again',
        { cause: error },
      );
      return this.damaged;
    }
    return new ContextFileError(this.path, 'write-failed', `could not append (${what}); the file is as it was before this append`, { cause: error });
  }
}

function openError(path: string, error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT' || code === 'ENOTDIR') {
    return new ContextFileError(path, 'missing-directory', 'cannot create the file: its directory does not exist', { cause: error });
  }
  if (code === 'EISDIR') return new ContextFileError(path, 'not-a-file', 'not a regular file (a directory)', { cause: error });
  return fileOpenError(path, error);
}

function describeIoError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return code !== undefined && !message.includes(code) ? `${code}: ${message}` : message;
}
