import { ContextFileError } from '@kosong/core';

/**
 * The one line the CLI prints when the session file is held by another process (core's
 * `ContextFileError` with problem `locked`: its lock file names the holder), or `undefined` for any
 * other error. The CLI has then neither loaded nor changed the session, nor run anything.
 */
export function sessionInUseMessage(error: unknown): string | undefined {
  if (!ContextFileError.isInstance(error) || error.problem !== 'locked') return undefined;
  const { holder } = error;
  const who = holder === undefined ? 'another process' : `process ${holder.pid} on ${holder.host} (since ${holder.since})`;
  return `the session ${error.path} is in use by ${who}: one kosong at a time can use a session file; wait until that one ends, or pass another --session`;
}
