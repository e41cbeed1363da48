import { ContextFileError } from '@kosong/core';

/**
 * The one line the CLI prints when the session file is held by another process (core's
 * `ContextFileError` with problem `locked`: its lock file names the holder), or `undefined` for any
 * other error. The CLI has then neither loaded nor changed the session, nor run anything.
 */
export function sessionInUseMessage(error: unknown): string | undefined {
  if (!ContextFileError.isInstance(error) || error.problem !== 'locked') return undefined;
  // The core names the holder in its message ("… in use by process 123 on host (since …): …").
  const holder = /in use by (.+?): /.exec(error.message)?.[1] ?? 'another process';
  return `the session ${error.path} is in use by ${holder}: one kosong at a time can use a session file; wait until that one ends, or pass another --session`;
}
