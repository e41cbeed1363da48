#!/usr/bin/env node
/**
 * Run by `npm test` after the build, before mocha: the `@kosong/server` page tests drive
 * Debian's `chromium` (the one on the PATH, or `$CHROMIUM`) with `playwright-core`; no browser is
 * ever downloaded. A fresh machine lacks it.
 *
 * - Found: nothing to do, nothing printed.
 * - Missing, as root on a machine with apt-get (a container, CI): installs Debian's `chromium`
 *   (`apt-get update -qq && apt-get install -y -qq chromium`, as `.ci/run` does), saying so.
 * - Missing elsewhere: stops at once (exit 1) with the one command to run, before any test runs.
 *   (It runs after the build because test/src/ensure-redis-server.spec.ts pins the start of the
 *   `test` script: redis-server's check, then the build.)
 *
 * @module
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

const INSTALL = 'apt-get update -qq && apt-get install -y -qq chromium';
const WHY = 'the @kosong/server page tests drive it with playwright-core';

const wanted = process.env.CHROMIUM?.trim() || 'chromium';

/** The executable file `name` names: a path, or a command looked up on the PATH; `undefined` if none. */
function executable(name) {
  const candidates = name.includes('/') ? [isAbsolute(name) ? name : resolve(name)] : (process.env.PATH ?? '').split(delimiter).filter(Boolean).map((dir) => join(dir, name));
  return candidates.find((file) => {
    try {
      accessSync(file, constants.X_OK);
      return statSync(file).isFile();
    } catch {
      return false;
    }
  });
}

/** The one command that installs Chromium here, for the message when it is missing. */
function installCommand() {
  const sudo = process.getuid?.() === 0 ? '' : 'sudo ';
  if (executable('apt-get')) return `${sudo}apt-get update && ${sudo}apt-get install -y chromium`;
  if (executable('dnf')) return `${sudo}dnf install -y chromium`;
  if (executable('apk')) return `${sudo}apk add chromium`;
  if (executable('pacman')) return `${sudo}pacman -S --noconfirm chromium`;
  if (executable('zypper')) return `${sudo}zypper install -y chromium`;
  return undefined;
}

if (executable(wanted) === undefined) {
  const root = process.getuid?.() === 0;
  if (wanted === 'chromium' && root && process.platform === 'linux' && executable('apt-get')) {
    process.stdout.write(`npm test: chromium is missing (${WHY}); installing Debian's: ${INSTALL}\n`);
    const run = spawnSync('/bin/sh', ['-c', INSTALL], { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    if (run.status !== 0 || executable(wanted) === undefined) {
      process.stderr.write(`npm test: installing chromium failed (${run.error?.message ?? `exit code ${run.status}`}); install it yourself, then run npm test again\n`);
      process.exit(1);
    }
    process.stdout.write('npm test: chromium installed\n');
  } else {
    const command = installCommand();
    const install = command === undefined ? 'Install Chromium ' : `Install it with\n\n  ${command}\n\n`;
    const what = wanted === 'chromium' ? 'chromium is not on the PATH' : `CHROMIUM=${wanted} is not an executable file`;
    process.stderr.write(`npm test: ${what} (${WHY}). ${install}and run npm test again (or set CHROMIUM to the path of a Chromium or Chrome).\n`);
    process.exit(1);
  }
}
