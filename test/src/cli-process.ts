/**
 * Runs the `kosong` CLI (the build output of the `cli` package) as a subprocess for the end-to-end
 * specs of this package.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The `kosong` command as users run it: the CLI's bin, which runs its bundle (`cli/dist`). */
export const CLI_BIN = fileURLToPath(new URL('../../cli/bin/kosong.js', import.meta.url));

/** How a CLI run ended, with everything it wrote. */
export interface CliExit {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs the CLI to its exit (killed after 15 s) in `cwd`, with no colour and these variables added to
 * the environment; `unset` names variables of this process the CLI must not see.
 */
export function runCli(args: readonly string[], cwd: string, env: Record<string, string>, unset: readonly string[] = []): Promise<CliExit> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', TERM: 'dumb', ...env };
  for (const name of ['FORCE_COLOR', 'NODE_OPTIONS', ...unset]) delete childEnv[name];
  const child = spawn(process.execPath, [CLI_BIN, ...args], { cwd, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`kosong ${args.join(' ')} did not exit in time\n${stdout}\n${stderr}`));
    }, 15_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
