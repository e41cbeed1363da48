/**
 * The peer libraries kosong is measured against (the Vercel AI SDK). They are not part of the root
 * install: `ai` 7 declares Node ≥ 22, and the project supports Node ≥ 20.19, so a default
 * `npm install` on Node 20 would warn about them. They live in their own package, `bench/peers/`
 * (git-ignored `node_modules/` and `lib/`), installed and compiled only when a benchmark that needs
 * them runs.
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { VariantModule } from './harness.js';

/** The directory of the peers' package. */
export const PEERS_DIR = fileURLToPath(new URL('../peers/', import.meta.url));

/** Imports a compiled module of `bench/peers` (see {@link preparePeers}), e.g. `step-ai-sdk.js`. */
export function loadPeerVariant(file: string): Promise<VariantModule> {
  return import(new URL(`../peers/lib/${file}`, import.meta.url).href) as Promise<VariantModule>;
}

/**
 * Makes `bench/peers` ready: installs its dependencies from its lockfile when what is installed is
 * not what its `package.json` asks for, then compiles it. Progress goes to `log`.
 *
 * @throws when `npm ci` or the compiler fails (naming the command and its exit code).
 */
export async function preparePeers(log: (line: string) => void): Promise<void> {
  const wanted = await dependencyVersions(`${PEERS_DIR}package.json`, 'dependencies');
  const missing = [];
  for (const [name, version] of Object.entries(wanted)) {
    const installed = await installedVersion(name);
    if (installed !== version) missing.push(`${name}@${version}${installed ? ` (found ${installed})` : ''}`);
  }
  if (missing.length > 0) {
    log(`installing the peers of the benchmarks into bench/peers/node_modules: ${missing.join(', ')}`);
    const [npm, ...npmArgs] = npmCommand();
    await run(npm, [...npmArgs, 'ci', '--no-audit', '--no-fund'], PEERS_DIR);
  }
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  await run(process.execPath, [tsc, '-p', PEERS_DIR], PEERS_DIR);
}

/** The npm that runs `npm run bench` (so the same npm installs the peers), or `npm` from the PATH. */
function npmCommand(): [string, ...string[]] {
  const execPath = process.env['npm_execpath'];
  return execPath ? [process.execPath, execPath] : ['npm'];
}

async function dependencyVersions(file: string, field: string): Promise<Record<string, string>> {
  const manifest = JSON.parse(await readFile(file, 'utf8')) as Record<string, Record<string, string> | undefined>;
  return manifest[field] ?? {};
}

async function installedVersion(name: string): Promise<string | undefined> {
  try {
    const manifest = JSON.parse(await readFile(`${PEERS_DIR}node_modules/${name}/package.json`, 'utf8')) as { version?: string };
    return manifest.version;
  } catch {
    return undefined;
  }
}

function run(command: string, args: readonly string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 2, 2] /* progress to stderr: stdout is the report */ });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`${[command, ...args].join(' ')} (in ${cwd}) failed with ${signal ?? `exit code ${code}`}`));
    });
  });
}
