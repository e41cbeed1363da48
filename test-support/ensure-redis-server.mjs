#!/usr/bin/env node
/**
 * Run first by `npm test`: the `@kosong/bullmq` and `kosong --redis` tests start their own
 * `redis-server` (the one on the PATH, or `$REDIS_SERVER`), which a fresh machine lacks.
 *
 * - Found: nothing to do, nothing printed.
 * - Missing, as root on a machine with apt-get (a container, CI): installs Debian's `redis-server`
 *   (`apt-get update -qq && apt-get install -y -qq redis-server`, as `.ci/run` does), saying so.
 * - Missing elsewhere: stops at once (exit 1) with the one command to run, before anything is built.
 *
 * @module
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

const INSTALL = 'apt-get update -qq && apt-get install -y -qq redis-server';
const WHY = 'the @kosong/bullmq and kosong --redis tests start their own redis-server';

const wanted = process.env.REDIS_SERVER?.trim() || 'redis-server';

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

/** The one command that installs Redis here, for the message when it is missing. */
function installCommand() {
  if (process.platform === 'darwin') return 'brew install redis';
  const sudo = process.getuid?.() === 0 ? '' : 'sudo ';
  if (executable('apt-get')) return `${sudo}apt-get update && ${sudo}apt-get install -y redis-server`;
  if (executable('dnf')) return `${sudo}dnf install -y redis`;
  if (executable('apk')) return `${sudo}apk add redis`;
  if (executable('pacman')) return `${sudo}pacman -S --noconfirm redis`;
  if (executable('zypper')) return `${sudo}zypper install -y redis`;
  return undefined;
}

if (executable(wanted) === undefined) {
  const root = process.getuid?.() === 0;
  if (wanted === 'redis-server' && root && process.platform === 'linux' && executable('apt-get')) {
    process.stdout.write(`npm test: redis-server is missing (${WHY}); installing Debian's: ${INSTALL}\n`);
    const run = spawnSync('/bin/sh', ['-c', INSTALL], { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    if (run.status !== 0 || executable(wanted) === undefined) {
      process.stderr.write(`npm test: installing redis-server failed (${run.error?.message ?? `exit code ${run.status}`}); install it yourself, then run npm test again\n`);
      process.exit(1);
    }
    process.stdout.write('npm test: redis-server installed\n');
  } else {
    const command = installCommand();
    const install = command === undefined ? 'Install Redis (https://redis.io/docs/latest/operate/oss_and_stack/install/) ' : `Install it with\n\n  ${command}\n\n`;
    const what = wanted === 'redis-server' ? 'redis-server is not on the PATH' : `REDIS_SERVER=${wanted} is not an executable file`;
    process.stderr.write(`npm test: ${what} (${WHY}). ${install}and run npm test again (or set REDIS_SERVER to the path of a redis-server).\n`);
    process.exit(1);
  }
}
