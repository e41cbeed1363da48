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
import { ensureCommand } from './ensure-command.mjs';

ensureCommand({
  command: 'chromium',
  variable: 'CHROMIUM',
  why: 'the @kosong/server page tests drive it with playwright-core',
  packages: { dnf: 'chromium', apk: 'chromium', pacman: 'chromium', zypper: 'chromium' },
  manual: 'Install Chromium ',
  pathHint: 'the path of a Chromium or Chrome',
});
