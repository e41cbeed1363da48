#!/usr/bin/env node
// The `kosong` command. This file is committed, not built: npm links a package's bin when it
// installs it, before `prepare` has compiled lib/, and a link to a file that does not exist yet
// would never get its executable bit. The command itself is lib/main.js.
import { existsSync } from 'node:fs';

const main = new URL('../lib/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write('kosong: the CLI is not built yet (cli/lib/main.js is missing); run `npm run build` in the repository first\n');
  process.exit(2);
}
await import(main.href);
