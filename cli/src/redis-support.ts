/**
 * `--redis` needs BullMQ, which the CLI does not install: `@kosong/bullmq` is an optional peer
 * dependency (its code is in the bundle; BullMQ and ioredis, which it brings, are loaded from
 * `node_modules`). Installing the CLI alone then pulls neither them nor `msgpackr-extract` and its
 * install script.
 *
 * @module
 */
import { fail } from './setup-failure.js';

/** The packages `--redis` loads from `node_modules` (what `@kosong/bullmq` brings, and itself). */
const REDIS_PACKAGES: ReadonlySet<string> = new Set(['@kosong/bullmq', 'bullmq', 'ioredis']);

/** The setup error when they are missing. */
export const REDIS_SUPPORT_MISSING =
  '--redis needs BullMQ, which the CLI does not install (it is an optional peer dependency): ' +
  'install @kosong/bullmq next to it (npm install @kosong/bullmq; for a global kosong, npm install -g @kosong/bullmq)';

/**
 * Loads the part of the CLI that runs on Redis (`load` imports its module); when BullMQ is not
 * installed, ends the process with the setup error saying what to install (exit 2).
 */
export async function loadRedisSupport<T>(load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (missingPackage(error) !== undefined) fail(REDIS_SUPPORT_MISSING);
    throw error;
  }
}

/** The package of {@link REDIS_PACKAGES} whose absence made an import fail, if that is why it failed. */
export function missingPackage(error: unknown): string | undefined {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (code !== 'ERR_MODULE_NOT_FOUND' || typeof message !== 'string') return undefined;
  const name = /Cannot find (?:package|module) '([^']+)'/.exec(message)?.[1];
  if (name === undefined) return undefined;
  const packageName = name.startsWith('@') ? name.split('/').slice(0, 2).join('/') : name.split('/')[0]!;
  return REDIS_PACKAGES.has(packageName) ? packageName : undefined;
}
