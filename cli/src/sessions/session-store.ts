/**
 * Where `kosong chat` keeps its conversations when no `--session` file is named: one JSONL file per
 * session in the sessions directory, named `<UTC date>-<time>-<random>.jsonl` (the name without
 * `.jsonl` is the session's id), and what `kosong sessions`, `--continue` and `--resume` read there.
 *
 * @module
 */
import { LinearContext, extractText } from '@kosong/core';
import { estimateRequestTokens } from '@kosong/core/kernel';
import { randomBytes } from 'node:crypto';
import { lstat, readdir } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, isAbsolute, join } from 'node:path';
import { escapeUnprintable } from '../approval/printable-command.js';

/** A saved session, as `kosong sessions` lists it. */
export interface SavedSession {
  readonly id: string;
  readonly path: string;
  /** When it was last written. */
  readonly modified: Date;
  /** The first user message's text, on one line, escaped, at most 60 characters. */
  readonly firstPrompt: string;
  /** User messages (turns). */
  readonly turns: number;
  /** The history's tokens, estimated as tenant limits estimate them (`estimateRequestTokens`: characters / 4). */
  readonly tokens: number;
}

/** A session that cannot be listed (not a session, held, unreadable): its id and why. */
export interface UnreadableSession {
  readonly id: string;
  readonly problem: string;
}

/**
 * The sessions directory: `$KOSONG_HOME/sessions` when `KOSONG_HOME` is set, else
 * `$XDG_DATA_HOME/kosong/sessions`, else `~/.local/share/kosong/sessions`.
 *
 * @throws TypeError for a relative `KOSONG_HOME` or `XDG_DATA_HOME` (it would move with the working directory).
 */
export function sessionsDirectory(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const home = env.KOSONG_HOME;
  if (home !== undefined) {
    if (!isAbsolute(home)) throw new TypeError(`KOSONG_HOME must be an absolute path (got ${JSON.stringify(home)})`);
    return join(home, 'sessions');
  }
  const data = env.XDG_DATA_HOME;
  if (data !== undefined && data !== '') {
    if (!isAbsolute(data)) throw new TypeError(`XDG_DATA_HOME must be an absolute path (got ${JSON.stringify(data)})`);
    return join(data, 'kosong', 'sessions');
  }
  return join(homedir(), '.local', 'share', 'kosong', 'sessions');
}

/** The file of a new session in `directory` (not created: the first turn creates it). */
export function newSessionPath(directory: string, now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15); // 20261202-154500
  return join(directory, `${stamp}-${randomBytes(3).toString('hex')}.jsonl`);
}

/** The session files of `directory`, newest first (regular files only: a link is not a session). */
async function sessionFiles(directory: string): Promise<{ readonly id: string; readonly path: string; readonly modified: Date }[]> {
  let names: string[];
  try {
    names = await readdir(directory);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const files = await Promise.all(
    names
      .filter((name) => name.endsWith('.jsonl'))
      .map(async (name) => {
        const path = join(directory, name);
        const info = await lstat(path).catch(() => undefined);
        return info?.isFile() === true ? { id: basename(name, '.jsonl'), path, modified: info.mtime } : undefined;
      }),
  );
  return files.filter((file) => file !== undefined).sort((a, b) => b.modified.getTime() - a.modified.getTime() || b.id.localeCompare(a.id));
}

/** The saved sessions of `directory`, newest first, and those that cannot be read. Reads each without taking its lock. */
export async function listSessions(directory: string): Promise<{ readonly sessions: readonly SavedSession[]; readonly unreadable: readonly UnreadableSession[] }> {
  const sessions: SavedSession[] = [];
  const unreadable: UnreadableSession[] = [];
  for (const file of await sessionFiles(directory)) {
    const context = new LinearContext(file.path, { lock: false });
    try {
      await context.restore();
    } catch (error) {
      unreadable.push({ id: file.id, problem: (error as Error).message });
      continue;
    } finally {
      await context.close().catch(() => undefined);
    }
    const history = context.history;
    const users = history.filter((message) => message.role === 'user');
    const first = users[0] === undefined ? '' : oneLine(extractText(users[0]));
    sessions.push({ ...file, firstPrompt: first, turns: users.length, tokens: estimateRequestTokens('', [], history) });
  }
  return { sessions, unreadable };
}

/**
 * The file of the session `id` names: a whole id, or the start of exactly one (`20261202-1545`);
 * `undefined` for the newest session (`--continue`).
 *
 * @throws Error when no session has that id, or several start with it, or the directory has none.
 */
export async function findSession(directory: string, id: string | undefined): Promise<string> {
  const files = await sessionFiles(directory);
  if (id === undefined) {
    if (files[0] === undefined) throw new Error(`there is no saved session to continue (sessions are kept in ${directory})`);
    return files[0].path;
  }
  if (id === '' || id.includes('/') || id.includes('\\')) throw new Error(`"${id}" is not a session id (kosong sessions lists them)`);
  const exact = files.find((file) => file.id === id);
  if (exact !== undefined) return exact.path;
  const starting = files.filter((file) => file.id.startsWith(id));
  if (starting.length === 1) return starting[0]!.path;
  if (starting.length > 1) throw new Error(`"${id}" is the start of ${starting.length} sessions (${starting.slice(0, 3).map((file) => file.id).join(', ')}…): give more of the id`);
  throw new Error(`no saved session "${id}" (kosong sessions lists them)`);
}

function oneLine(text: string): string {
  const line = escapeUnprintable(text.replace(/\s+/g, ' ').trim());
  return line.length > 60 ? `${line.slice(0, 59)}…` : line;
}
