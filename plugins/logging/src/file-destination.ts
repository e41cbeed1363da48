import { closeSync, fstatSync, fsync, openSync } from 'node:fs';
import { pino } from 'pino';

type SonicBoom = ReturnType<typeof pino.destination>;

/**
 * The destination the logger builds for a `destination` given as a file path or a file descriptor.
 *
 * Lines are written synchronously (pino's `sync: true`): each one is in the file when its log call
 * returns, so a script that exits right after `flush()` or `kernel.dispose()` loses nothing, and a
 * crash loses no line already logged. (Pino's default asynchronous destination opens a file path
 * later and writes in the background: its `flush` resolved before the file was even open.)
 *
 * The file is opened here, at once, so a path that cannot be opened is an error of the constructor
 * rather than an `error` event later. A path is opened for appending and closed by {@link close};
 * a descriptor given by the caller stays the caller's and is never closed.
 */
export class FileDestination {
  /** The pino destination stream. */
  readonly stream: SonicBoom;
  readonly #fd: number;
  readonly #ownsDescriptor: boolean;
  #closed: Promise<void> | undefined;

  /** @throws {Error} naming the path or descriptor if it cannot be opened (or is not open). */
  constructor(target: string | number) {
    this.#ownsDescriptor = typeof target === 'string';
    this.#fd = typeof target === 'string' ? openLogFile(target) : checkDescriptor(target);
    try {
      this.stream = pino.destination({ dest: this.#fd, sync: true });
    } catch (error) {
      if (this.#ownsDescriptor) closeSync(this.#fd);
      throw error;
    }
  }

  /** Whether {@link close} was called. */
  get closed(): boolean {
    return this.#closed !== undefined;
  }

  /**
   * Resolves once every line written so far is on disk: the lines are already in the file (written
   * synchronously); this also asks the system to sync it (`fsync`, skipped where the descriptor
   * cannot be synced, e.g. a pipe or a terminal).
   */
  flush(): Promise<void> {
    if (this.#closed !== undefined) return this.#closed;
    return new Promise((resolve) => fsync(this.#fd, () => resolve()));
  }

  /** Syncs and closes a file opened from a path (a caller's descriptor is only synced). Idempotent. */
  close(): Promise<void> {
    this.#closed ??= this.#ownsDescriptor ? this.#end() : this.flush();
    return this.#closed;
  }

  #end(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.stream.once('close', () => resolve());
      this.stream.once('error', reject);
      this.stream.end();
    });
  }
}

function openLogFile(path: string): number {
  try {
    return openSync(path, 'a');
  } catch (error) {
    throw new Error(`logging: cannot open the log file ${path}: ${(error as Error).message}`, { cause: error });
  }
}

function checkDescriptor(fd: number): number {
  try {
    fstatSync(fd);
    return fd;
  } catch (error) {
    throw new Error(`logging: file descriptor ${fd} is not open: ${(error as Error).message}`, { cause: error });
  }
}
