/**
 * `kosong sessions`: the saved sessions of the sessions directory, newest first — id, last change,
 * turns, estimated tokens and the first prompt (`--json`: one object per line).
 *
 * @module
 */
import type { Command } from 'commander';
import { fail } from '../setup-failure.js';
import { formatCount } from '../format-count.js';

/** The global options `kosong sessions` takes (the others are refused, not ignored). */
const SESSIONS_GLOBALS: ReadonlySet<string> = new Set(['json']);

/** Adds `kosong sessions` to the program. */
export function registerSessionsCommand(program: Command): void {
  program
    .command('sessions')
    .description('the saved chat sessions (in $KOSONG_HOME/sessions, else $XDG_DATA_HOME/kosong/sessions, else ~/.local/share/kosong/sessions), newest first; go on with one with --resume <id>, or the newest with --continue')
    .action(async () => {
      const given = program.options.filter((option) => !SESSIONS_GLOBALS.has(option.attributeName()) && program.getOptionValueSource(option.attributeName()) === 'cli');
      if (given.length > 0) fail(`sessions: ${given.map((option) => option.long).join(', ')} ${given.length === 1 ? 'is not an option' : 'are not options'} of kosong sessions (its options: --json)`);
      const { listSessions, sessionsDirectory } = await import('./session-store.js');
      let directory: string;
      try {
        directory = sessionsDirectory();
      } catch (error) {
        return fail((error as Error).message);
      }
      const { sessions, unreadable } = await listSessions(directory);
      const json = program.opts<{ json?: boolean }>().json === true;
      if (json) {
        for (const s of sessions) process.stdout.write(`${JSON.stringify({ id: s.id, modified: s.modified.toISOString(), turns: s.turns, tokens: s.tokens, firstPrompt: s.firstPrompt, path: s.path })}\n`);
        for (const u of unreadable) process.stdout.write(`${JSON.stringify({ id: u.id, problem: u.problem })}\n`);
        return;
      }
      if (sessions.length === 0 && unreadable.length === 0) {
        process.stdout.write(`no saved sessions (kosong chat saves each in ${directory})\n`);
        return;
      }
      const idWidth = Math.max(2, ...sessions.map((s) => s.id.length));
      process.stdout.write(`${'ID'.padEnd(idWidth)}  ${'LAST CHANGE (UTC)'.padEnd(16)}  ${'TURNS'.padStart(5)}  ${'TOKENS'.padStart(7)}  FIRST PROMPT\n`);
      for (const s of sessions) {
        const when = s.modified.toISOString().slice(0, 16).replace('T', ' ');
        process.stdout.write(`${s.id.padEnd(idWidth)}  ${when.padEnd(16)}  ${String(s.turns).padStart(5)}  ${`~${formatCount(s.tokens)}`.padStart(7)}  ${s.firstPrompt}\n`);
      }
      for (const u of unreadable) process.stdout.write(`${u.id}: cannot be read (${u.problem})\n`);
    });
}
