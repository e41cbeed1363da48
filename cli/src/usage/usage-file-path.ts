import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

/**
 * Where the CLI keeps its usage file: `$KOSONG_HOME/usage.jsonl`, by default `~/.kosong/usage.jsonl`.
 * (The CLI has no sessions directory of its own: a session is the `--session` file wherever it is;
 * the usage of every session goes to this one file.)
 *
 * @throws TypeError when `KOSONG_HOME` is set to an empty or relative path (it would move with the working directory).
 */
export function usageFilePath(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const home = env.KOSONG_HOME;
  if (home === undefined) return join(homedir(), '.kosong', 'usage.jsonl');
  if (!isAbsolute(home)) throw new TypeError(`KOSONG_HOME must be an absolute path (got ${JSON.stringify(home)})`);
  return join(home, 'usage.jsonl');
}
