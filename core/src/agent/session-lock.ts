import { constants, readFileSync } from 'node:fs';
import { link, mkdir, open, rmdir, stat, unlink, utimes } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import { randomUUID } from '../random-uuid.js';
import { fileOpenError } from './append-only-file.js';
import { ContextFileError } from './context-errors.js';

/** What a lock file says of its holder. */
interface Holder {
  readonly pid: number;
  readonly host: string;
  readonly token: string;
  readonly since: string;
}

/** Options of {@link SessionLock.acquire}. */
export interface SessionLockOptions {
  /**
   * How long a lock of a process on another host stays valid without its heartbeat (its file's
   * mtime, touched every third of this); default 10 s. A lock of this host is valid while its process lives.
   */
  readonly staleMs?: number;
}

const DEFAULT_STALE_MS = 10_000;

/**
 * The exclusive lock of one history file, held by the context that writes it: a file
 * `<history>.lock`, created exclusively (never through a symbolic link), naming the process that
 * holds it. A lock whose process is gone (on this host: the pid no longer runs, e.g. after a
 * SIGKILL; on another: its heartbeat stopped) is taken over, under a takeover directory so that two
 * processes cannot both take it. The lock installs no process handlers: a process that exits without
 * releasing it leaves the file, which the next holder takes over at once.
 */
export class SessionLock {
  #heartbeat: NodeJS.Timeout | undefined;
  #released = false;

  private constructor(
    readonly path: string,
    readonly lockPath: string,
    private readonly token: string,
    staleMs: number,
  ) {
    this.#heartbeat = setInterval(() => void utimes(lockPath, new Date(), new Date()).catch(() => undefined), Math.max(100, Math.floor(staleMs / 3)));
    this.#heartbeat.unref();
  }

  /**
   * Takes the lock of history file `path`.
   *
   * @throws ContextFileError `locked` when a live process holds it (this one included), naming it.
   */
  static async acquire(path: string, options: SessionLockOptions = {}): Promise<SessionLock> {
    const staleMs = options.staleMs ?? DEFAULT_STALE_MS;
    const lockPath = `${path}.lock`;
    const token = randomUUID();
    const me: Holder = { pid: process.pid, host: hostname(), token, since: new Date().toISOString() };
    for (let attempt = 0; ; attempt++) {
      if (await create(lockPath, me)) return new SessionLock(path, lockPath, token, staleMs);
      const seen = await readHolder(lockPath);
      if (seen === 'gone') continue;
      if (!isStale(seen, staleMs) || attempt >= 20) {
        const { holder } = seen;
        const who = holder ? `process ${holder.pid} on ${holder.host} (since ${holder.since})` : 'another process';
        throw new ContextFileError(path, 'locked', `the session is in use by ${who}: one context writes a session at a time (lock file ${lockPath})`, {
          ...(holder ? { holder: { pid: holder.pid, host: holder.host, since: holder.since } } : {}),
        });
      }
      await takeOver(lockPath, seen, staleMs);
    }
  }

  /** Releases the lock (once; a lock that is no longer this one's is left alone). */
  async release(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    clearInterval(this.#heartbeat);
    const seen = await readHolder(this.lockPath);
    if (seen !== 'gone' && seen.holder?.token === this.token) await unlink(this.lockPath).catch(() => undefined);
  }
}

/** A lock file as read: its holder (`undefined` while its creator is still writing it, or unreadable) and its mtime. */
interface Seen {
  readonly holder: Holder | undefined;
  readonly mtimeMs: number;
  readonly ino: number;
}

/**
 * Creates the lock file exclusively, whole: `me` is written to a file of its own, which is then
 * linked as the lock (a link never replaces a file, nor follows a link at the lock's path), so a
 * lock file is never seen half-written. `false` if one exists.
 */
async function create(lockPath: string, me: Holder): Promise<boolean> {
  const path = lockPath.slice(0, -'.lock'.length);
  const draft = `${lockPath}.${me.token}`;
  let handle;
  try {
    handle = await open(draft, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | (constants.O_NOFOLLOW ?? 0), 0o600);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw new ContextFileError(path, 'missing-directory', `the directory ${dirname(path)} does not exist, so the file cannot be created`, { cause: error });
    }
    throw fileOpenError(path, error);
  }
  try {
    try {
      await handle.writeFile(JSON.stringify(me));
      await handle.sync();
    } finally {
      await handle.close();
    }
    await link(draft, lockPath);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw fileOpenError(path, error);
  } finally {
    await unlink(draft).catch(() => undefined);
  }
}

async function readHolder(lockPath: string): Promise<Seen | 'gone'> {
  let text: string;
  let stats;
  try {
    const handle = await open(lockPath, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
    try {
      stats = await handle.stat();
      text = await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return 'gone';
    if (code === 'ELOOP' || code === 'EMLINK') {
      throw new ContextFileError(lockPath.slice(0, -'.lock'.length), 'locked', `its lock file ${lockPath} is a symbolic link: refusing to follow it`, { cause: error });
    }
    throw error;
  }
  let holder: Holder | undefined;
  try {
    const value = JSON.parse(text) as Partial<Holder>;
    if (typeof value.pid === 'number' && typeof value.host === 'string' && typeof value.token === 'string') holder = value as Holder;
  } catch {
    holder = undefined;
  }
  return { holder, mtimeMs: stats.mtimeMs, ino: stats.ino };
}

/** Whether the holder is gone: a process of this host that no longer runs, or a lock whose heartbeat stopped. */
function isStale(seen: Seen, staleMs: number): boolean {
  const { holder } = seen;
  if (holder !== undefined && holder.host === hostname()) return !isRunning(holder.pid);
  return Date.now() - seen.mtimeMs > staleMs;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  return !isZombie(pid);
}

/**
 * Whether the process has ended but was not reaped yet (a zombie: state `Z` in `/proc/<pid>/stat`,
 * e.g. a SIGKILLed process whose parent has not waited for it). Where there is no `/proc`, `false`.
 */
function isZombie(pid: number): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return false;
  }
  // "pid (comm) state …": comm may hold spaces and parentheses, so the state follows the last ')'.
  return stat.charAt(stat.lastIndexOf(')') + 2) === 'Z';
}

/** Removes a stale lock file, provided it is still the one seen, under the takeover directory. */
async function takeOver(lockPath: string, seen: Seen, staleMs: number): Promise<void> {
  const mutex = `${lockPath}.takeover`;
  try {
    await mkdir(mutex, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // Someone else takes it over; a takeover directory left by a process that died there goes after staleMs.
    const since = await stat(mutex).then((s) => s.mtimeMs, () => Date.now());
    if (Date.now() - since > staleMs) await rmdir(mutex).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 10 + Math.random() * 40));
    return;
  }
  try {
    const now = await readHolder(lockPath);
    if (now !== 'gone' && now.ino === seen.ino && now.holder?.token === seen.holder?.token) await unlink(lockPath);
  } finally {
    await rmdir(mutex).catch(() => undefined);
  }
}
