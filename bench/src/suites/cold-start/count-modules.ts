/**
 * Preloaded (`node --import <this>`) by the cold-start suite's counting pass, never in a timed run:
 * counts the modules a program loads — ES modules through a module-loading hook, CommonJS modules from
 * the require cache at exit — and writes `esm <n>` and `cjs <n>` lines to the file named by the
 * `KOSONG_BENCH_MODULE_COUNT` environment variable.
 *
 * @module
 */
import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';

const file = process.env['KOSONG_BENCH_MODULE_COUNT'];
if (file) {
  register(new URL('./count-modules-hooks.js', import.meta.url), { data: { file } });
  const cache = createRequire(import.meta.url).cache;
  process.on('exit', () => appendFileSync(file, `cjs ${Object.keys(cache).length}\n`));
}
