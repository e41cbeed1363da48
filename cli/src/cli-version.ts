import { readFileSync } from 'node:fs';

/** The package's version, written into the bundle by `scripts/bundle.mjs`; not defined in the tsc output. */
declare const KOSONG_CLI_VERSION: string | undefined;

/** The version of the `@kosong/cli` package (`kosong --version`). */
export function cliVersion(): string {
  if (typeof KOSONG_CLI_VERSION === 'string') return KOSONG_CLI_VERSION;
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return manifest.version;
}
