import { readFileSync } from 'node:fs';

/** The version of the `@kosong/cli` package (`kosong --version`). */
export function cliVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return manifest.version;
}
