/**
 * Servers in a process of their own, so that serving a response costs the measured process nothing.
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';

/**
 * Starts `node <script>` (with `nodeArgs` before it, and `env` over this process's environment) and
 * resolves with the URL it prints as its first line. The script must exit when its stdin closes: it then ends with the process that started it, however that ends.
 */
export async function startServerProcess(script: string, options: { readonly nodeArgs?: readonly string[]; readonly env?: Readonly<Record<string, string>> } = {}): Promise<string> {
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), script], { stdio: ['pipe', 'pipe', 'inherit'], ...(options.env === undefined ? {} : { env: { ...process.env, ...options.env } }) });
  child.unref();
  child.stdout.setEncoding('utf8');
  let output = '';
  for await (const chunk of child.stdout as AsyncIterable<string>) {
    output += chunk;
    if (output.includes('\n')) break;
  }
  const url = output.trim();
  if (!url.startsWith('http://127.0.0.1:')) {
    child.kill();
    await once(child, 'exit');
    throw new Error(`the bench server did not start: ${JSON.stringify(output)}`);
  }
  return url;
}

/**
 * The server side of {@link startServerProcess}: prints `url` as one line and exits once stdin
 * closes (the process that started this one went away), after `close`.
 */
export function serveUntilParentExits(url: string, close: () => Promise<void>): void {
  process.stdout.write(`${url}\n`);
  process.stdin.resume();
  process.stdin.on('end', () => void close().then(() => process.exit(0)));
  process.stdin.on('error', () => process.exit(0));
}
