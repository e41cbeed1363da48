import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type * as Zod from 'zod';

let loaded: typeof Zod | undefined;

/**
 * zod, loaded on first use rather than when `@kosong/core` is imported: it is some 100 ES modules,
 * and a process that never reads a message or a pending step from JSON should not load them. It is
 * the package's ES module build (required; Node ≥ 20.19 requires ES modules), the same instance
 * `import 'zod'` gives.
 */
export function lazyZod(): typeof Zod.z {
  loaded ??= createRequire(import.meta.url)(fileURLToPath(import.meta.resolve('zod'))) as typeof Zod;
  return loaded.z;
}
