import { errorMarker, hasErrorMarker, markError } from '../error-marker.js';

const CONTEXT_CORRUPTED_ERROR = errorMarker('ContextCorruptedError');
const CONTEXT_FILE_ERROR = errorMarker('ContextFileError');

/** Options of a {@link ContextCorruptedError}. */
export interface ContextCorruptedErrorOptions extends ErrorOptions {
  /** No valid record comes before the bad line: say that the file is not a history file at all. */
  readonly notAHistoryFile?: boolean;
}

/**
 * A history file holds something that is not a history: a bad line in the middle of a session, or
 * a file that was never a session (text, random bytes). The file is left exactly as it was.
 */
export class ContextCorruptedError extends Error {
  /** Whether no valid record comes before the bad line: the file is not a history file at all. */
  readonly notAHistoryFile: boolean;

  constructor(
    readonly path: string,
    /** 1-based number of the bad line. */
    readonly line: number,
    detail: string,
    options?: ContextCorruptedErrorOptions,
  ) {
    const notAHistoryFile = options?.notAHistoryFile === true;
    super(
      notAHistoryFile
        ? `${path} is not a history file: line ${line} is not a valid history record (${detail}); refusing to load or change it`
        : `${path}: line ${line} is not a valid history record (${detail}); refusing to load a file corrupted in the middle`,
      options,
    );
    this.name = 'ContextCorruptedError';
    this.notAHistoryFile = notAHistoryFile;
    markError(this, CONTEXT_CORRUPTED_ERROR);
  }

  /** Whether `error` is a {@link ContextCorruptedError}. */
  static isInstance(error: unknown): error is ContextCorruptedError {
    return hasErrorMarker(error, CONTEXT_CORRUPTED_ERROR);
  }
}

/**
 * What stands in the way of using a history file:
 * - `missing-directory`: the file cannot be created, its directory does not exist;
 * - `not-a-file`: the path names a directory, a device, a pipe, … rather than a regular file;
 * - `write-failed`: an append could not be written completely (disk full, file size limit, I/O error);
 * - `file-replaced`: the file was renamed, deleted or replaced since it was opened;
 * - `file-changed`: something else wrote to or truncated the file since this context last did;
 * - `locked`: another context holds the session (in this process or another: its lock file
 *   `<file>.lock` names the process), so this one may neither load nor write it;
 * - `no-access`: the file or its directory may not be read or written (EACCES, EPERM, EROFS);
 * - `unsafe-file`: the path is a symbolic link (dangling or not), a file with other hard links, or a
 *   file another user owns: a session never reads, creates, appends to or truncates a file through
 *   it (it could be someone's `authorized_keys`).
 */
export type ContextFileProblem = 'missing-directory' | 'not-a-file' | 'write-failed' | 'file-replaced' | 'file-changed' | 'locked' | 'no-access' | 'unsafe-file';

/** The process holding a session's lock. */
export interface SessionHolder {
  readonly pid: number;
  readonly host: string;
  /** When it took the lock (an ISO time, as its lock file says). */
  readonly since: string;
}

/** Options of a {@link ContextFileError}. */
export interface ContextFileErrorOptions extends ErrorOptions {
  /** With `locked`: who holds the session. */
  readonly holder?: SessionHolder;
}

/**
 * A history file cannot be read or written safely. After a failed append the file is as it was
 * before that append (unless the message says otherwise), and the context has not changed either.
 */
export class ContextFileError extends Error {
  /** With `locked`: the process that holds the session, as its lock file names it (when it could be read). */
  readonly holder?: SessionHolder;

  constructor(
    readonly path: string,
    readonly problem: ContextFileProblem,
    message: string,
    options?: ContextFileErrorOptions,
  ) {
    super(`${path}: ${message}`, options);
    this.name = 'ContextFileError';
    if (options?.holder !== undefined) this.holder = options.holder;
    markError(this, CONTEXT_FILE_ERROR);
  }

  /** Whether `error` is a {@link ContextFileError}. */
  static isInstance(error: unknown): error is ContextFileError {
    return hasErrorMarker(error, CONTEXT_FILE_ERROR);
  }
}
