#!/usr/bin/env node
// The `kosong` command. This file is committed, not built: npm links a package's bin when it
// installs it, before `prepare` has built the command, and a link to a file that does not exist yet
// would never get its executable bit. The command itself is the bundle dist/kosong.js, built by
// `npm run build` (scripts/bundle.mjs).
import { existsSync } from 'node:fs';
import * as nodeModule from 'node:module';

const main = new URL('../dist/kosong.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write('kosong: the CLI is not built yet (cli/dist/kosong.js is missing); run `npm run build` in the repository first\n');
  process.exit(2);
}
// Node >= 22.1: keep the compiled code in a cache on disk (the OS's temporary directory), so the next
// start does not compile the bundle again. NODE_DISABLE_COMPILE_CACHE=1 turns it off.
nodeModule.enableCompileCache?.();
await import(main.href);
