/**
 * What `ensure-redis-server.mjs` and `ensure-chromium.mjs` share: a command the tests need is
 * found (on the PATH, or at the path an environment variable gives), installed from Debian's
 * packages when this is a root Linux machine with apt-get (a container, CI), or else `npm test`
 * stops at once (exit 1) with the one command that installs it here.
 *
 * @module
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

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

/**
 * @param {object} need
 * @param {string} need.command the command's name (`redis-server`), also Debian's package
 * @param {string} need.variable the environment variable that may name it instead (`REDIS_SERVER`)
 * @param {string} need.why what the tests do with it, for the messages
 * @param {Record<string, string>} need.packages the package of each other package manager (`dnf`, `apk`, `pacman`, `zypper`), and `brew` on macOS if there is one
 * @param {string} need.manual what to do when no package manager is known (`Install Redis (https://…) `)
 * @param {string} need.pathHint how the variable is meant (`the path of a redis-server`)
 */
export function ensureCommand({ command, variable, why, packages, manual, pathHint }) {
  const wanted = process.env[variable]?.trim() || command;
  if (executable(wanted) !== undefined) return;
  const install = `apt-get update -qq && apt-get install -y -qq ${command}`;
  if (wanted === command && process.getuid?.() === 0 && process.platform === 'linux' && executable('apt-get')) {
    process.stdout.write(`npm test: ${command} is missing (${why}); installing Debian's: ${install}\n`);
    // dpkg's hundreds of lines are kept back unless the install fails: then its last lines say why.
    const run = spawnSync('/bin/sh', ['-c', install], { stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024, env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    if (run.status !== 0 || executable(wanted) === undefined) {
      const said = `${run.stdout ?? ''}${run.stderr ?? ''}`.trimEnd().split('\n').slice(-30).join('\n');
      if (said !== '') process.stderr.write(`${said}\n`);
      process.stderr.write(`npm test: installing ${command} failed (${run.error?.message ?? `exit code ${run.status}`}); install it yourself, then run npm test again\n`);
      process.exit(1);
    }
    process.stdout.write(`npm test: ${command} installed\n`);
    return;
  }
  const found = installCommand(command, packages);
  const how = found === undefined ? manual : `Install it with\n\n  ${found}\n\n`;
  const what = wanted === command ? `${command} is not on the PATH` : `${variable}=${wanted} is not an executable file`;
  process.stderr.write(`npm test: ${what} (${why}). ${how}and run npm test again (or set ${variable} to ${pathHint}).\n`);
  process.exit(1);
}

/** The one command that installs `command` here, for the message when it is missing. */
function installCommand(command, packages) {
  if (process.platform === 'darwin') return packages.brew === undefined ? undefined : `brew install ${packages.brew}`;
  const sudo = process.getuid?.() === 0 ? '' : 'sudo ';
  if (executable('apt-get')) return `${sudo}apt-get update && ${sudo}apt-get install -y ${command}`;
  if (executable('dnf')) return `${sudo}dnf install -y ${packages.dnf}`;
  if (executable('apk')) return `${sudo}apk add ${packages.apk}`;
  if (executable('pacman')) return `${sudo}pacman -S --noconfirm ${packages.pacman}`;
  if (executable('zypper')) return `${sudo}zypper install -y ${packages.zypper}`;
  return undefined;
}
