/**
 * Preloaded (`node --import <this>`) by the cold-start suite's counting pass, never in a timed run:
 * counts the modules a program loads and writes `esm <url>` and `cjs <n>` lines to the file named by
 * the `KOSONG_BENCH_MODULE_COUNT` environment variable.
 *
 * Where Node has synchronous module hooks (`module.registerHooks`, Node ≥ 22.15) every ES module is
 * seen, imported or required (Node ≥ 20.19 requires ES modules); with the asynchronous hooks of
 * Node 20 only imported ones are, so an ES module graph loaded by `require` counts as its entry alone
 * there. CommonJS modules are counted from the require cache at exit.
 *
 * @module
 */
import { appendFileSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { fileURLToPath } from 'node:url';

const file = process.env['KOSONG_BENCH_MODULE_COUNT'];

/** `module.registerHooks`, where this Node has it (not in the types of Node 20). */
type RegisterHooks = (hooks: {
  load: (url: string, context: unknown, nextLoad: (url: string, context: unknown) => { format?: string | null | undefined }) => unknown;
}) => unknown;

if (file) {
  /** The ES modules seen (with synchronous hooks): required ones are in the require cache too. */
  const esModules = new Set<string>();
  const registerHooks = (nodeModule as unknown as { registerHooks?: RegisterHooks }).registerHooks;
  if (typeof registerHooks === 'function') {
    registerHooks({
      load(url, context, nextLoad) {
        const loaded = nextLoad(url, context);
        if (url.startsWith('file:') && loaded.format === 'module') {
          esModules.add(fileURLToPath(url));
          appendFileSync(file, `esm ${url}\n`);
        }
        return loaded;
      },
    });
  } else {
    nodeModule.register(new URL('./count-modules-hooks.js', import.meta.url), { data: { file } });
  }
  const cache = nodeModule.createRequire(import.meta.url).cache;
  process.on('exit', () => appendFileSync(file, `cjs ${Object.keys(cache).filter((key) => !esModules.has(key) && !key.endsWith('.mjs')).length}\n`));
}
