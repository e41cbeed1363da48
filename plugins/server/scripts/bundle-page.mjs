/**
 * Builds the web page of `@kosong/server` (run by the root `npm run build`, after `tsc -b`): the
 * React sources of `web/src/` — a chat on the AI SDK's `useChat` and its step timeline — are
 * type-checked (`tsc -p web/tsconfig.json`, no output), then bundled by esbuild into
 * `web/lib/app.js` (minified, one file), with `web/src/index.html` and `web/src/app.css` copied
 * beside it. `registerPage` (src/page.ts) serves that folder.
 *
 * `ai` is resolved from `@ai-sdk/react`'s own dependency, so that the bundle holds one copy of it
 * (npm nests the `ai` that `@ai-sdk/react` pins when it differs from the workspace's).
 *
 * zod (which `ai` validates the stream's chunks with) is bundled with its English messages only:
 * its `locales` index (every language, half of zod's size) becomes `{ en }`; the page never picks
 * another language.
 *
 * `--no-check` skips the type check.
 *
 * @module
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { build } from 'esbuild';

const WEB_DIR = fileURLToPath(new URL('../web/', import.meta.url));
const SOURCE_DIR = join(WEB_DIR, 'src');
const OUT_DIR = join(WEB_DIR, 'lib');
const require = createRequire(import.meta.url);

/** The folder `ai` resolves from inside `@ai-sdk/react`. */
const AI_SDK_REACT_DIR = dirname(require.resolve('@ai-sdk/react/package.json'));

/** Resolves every `ai` import as `@ai-sdk/react` resolves its own. */
const oneCopyOfAi = {
  name: 'one-copy-of-ai',
  setup(build) {
    build.onResolve({ filter: /^ai$/ }, async (args) => {
      if (args.pluginData === 'one-copy-of-ai') return undefined;
      return build.resolve('ai', { kind: args.kind, resolveDir: AI_SDK_REACT_DIR, pluginData: 'one-copy-of-ai' });
    });
  },
};

/** zod's `locales` index with English only. */
const englishZod = {
  name: 'english-zod',
  setup(build) {
    build.onLoad({ filter: /[\\/]node_modules[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, () => ({ contents: 'export { default as en } from "./en.js";\n', loader: 'js' }));
  },
};

if (!process.argv.includes('--no-check')) {
  const tsc = require.resolve('typescript/bin/tsc');
  const check = spawnSync(process.execPath, [tsc, '-p', join(WEB_DIR, 'tsconfig.json')], { stdio: 'inherit' });
  if (check.status !== 0) {
    process.stderr.write('bundle-page: the page does not type-check (see above)\n');
    process.exit(1);
  }
}

rmSync(OUT_DIR, { recursive: true, force: true });
mkdirSync(OUT_DIR, { recursive: true });
const result = await build({
  entryPoints: [join(SOURCE_DIR, 'main.tsx')],
  outfile: join(OUT_DIR, 'app.js'),
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  minify: true,
  jsx: 'automatic',
  define: { 'process.env.NODE_ENV': '"production"' },
  legalComments: 'none',
  metafile: true,
  logLevel: 'warning',
  plugins: [oneCopyOfAi, englishZod],
});
copyFileSync(join(SOURCE_DIR, 'index.html'), join(OUT_DIR, 'index.html'));
copyFileSync(join(SOURCE_DIR, 'app.css'), join(OUT_DIR, 'app.css'));

const copiesOfAi = new Set(Object.keys(result.metafile.inputs).filter((input) => /node_modules\/ai\/dist\//.test(input)).map((input) => input.replace(/dist\/.*$/, '')));
if (copiesOfAi.size > 1) {
  process.stderr.write(`bundle-page: the bundle holds ${copiesOfAi.size} copies of ai (${[...copiesOfAi].join(', ')})\n`);
  process.exit(1);
}
