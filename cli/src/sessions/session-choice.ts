/**
 * Which session file a local `kosong run` or `kosong chat` works on: `--session <file>`, a saved
 * session (`--continue`: the newest, `--resume <id>`), or for `chat` a new saved session.
 *
 * @module
 */
import { extractText, type Message } from '@kosong/core';
import { mkdir } from 'node:fs/promises';
import { basename } from 'node:path';
import { escapeUnprintable } from '../approval/printable-command.js';
import type { GlobalOptions } from '../cli-options.js';
import { findSession, newSessionPath, sessionsDirectory } from './session-store.js';

/** The session file chosen, and how. */
export interface SessionChoice {
  /** The file; `undefined`: the conversation is kept in memory only (`run` without a session flag). */
  readonly file: string | undefined;
  /** A new session in the sessions directory (`chat` without a session flag): its id, to tell the user at the end. */
  readonly newId?: string;
  /** A saved session gone on with (`--continue`, `--resume`): its conversation is shown first. */
  readonly resumed: boolean;
}

/**
 * Chooses the session file.
 * @throws Error for flags that do not go together, or a saved session that cannot be found (the message says which).
 */
export async function chooseSessionFile(options: Pick<GlobalOptions, 'session' | 'continue' | 'resume'>, command: 'run' | 'chat'): Promise<SessionChoice> {
  const saved = options.continue === true || options.resume !== undefined;
  if (options.continue === true && options.resume !== undefined) throw new Error('--continue and --resume: give one (--continue goes on with the newest session, --resume <id> with that one)');
  if (saved && options.session !== undefined) throw new Error('--session names a file; --continue and --resume choose a saved session: give one of them');
  if (options.session !== undefined) return { file: options.session, resumed: false };
  if (saved) return { file: await findSession(sessionsDirectory(), options.resume), resumed: true };
  if (command === 'run') return { file: undefined, resumed: false };
  const directory = sessionsDirectory();
  await mkdir(directory, { recursive: true, mode: 0o700 });
  const file = newSessionPath(directory);
  return { file, newId: basename(file, '.jsonl'), resumed: false };
}

/** Messages of a resumed conversation shown at most (its last ones). */
const SHOWN_MESSAGES = 20;

/**
 * The conversation so far, as shown before the prompt when a saved session is gone on with: the
 * user's messages (`> …`), the model's text and its tool calls (`→ name`), escaped (line breaks
 * kept); the last {@link SHOWN_MESSAGES} messages, the number of earlier ones said.
 */
export function conversationLines(history: readonly Message[]): string[] {
  const shown = history.filter((message) => message.role === 'user' || message.role === 'assistant');
  const lines: string[] = [];
  if (shown.length > SHOWN_MESSAGES) lines.push(`(${shown.length - SHOWN_MESSAGES} earlier messages not shown)`);
  for (const message of shown.slice(-SHOWN_MESSAGES)) {
    const text = escapeUnprintable(extractText(message).trim(), true);
    if (message.role === 'user') lines.push(`> ${text.replace(/\n/g, '\n  ')}`);
    else {
      if (text !== '') lines.push(text);
      for (const call of message.toolCalls ?? []) lines.push(`→ ${escapeUnprintable(call.function.name)}`);
    }
  }
  return lines;
}
