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
import { ensureCommand } from './ensure-command.mjs';

ensureCommand({
  command: 'redis-server',
  variable: 'REDIS_SERVER',
  why: 'the @kosong/bullmq and kosong --redis tests start their own redis-server',
  packages: { brew: 'redis', dnf: 'redis', apk: 'redis', pacman: 'redis', zypper: 'redis' },
  manual: 'Install Redis (https://redis.io/docs/latest/operate/oss_and_stack/install/) ',
  pathHint: 'the path of a redis-server',
});
