/**
 * Bundles the `kosong` command (run by `npm run build`, after `tsc -b`): from the compiled CLI
 * (`cli/lib/main.js`) to `cli/dist/`, which `bin/kosong.js` runs. One process then loads a handful
 * of files instead of hundreds of ES modules.
 *
 * - `dist/kosong.js` is the command; what a command loads lazily (`await import(…)`) is in chunks
 *   (`dist/chunks/`) loaded only when that command runs.
 * - Each first-party provider package is an entry of its own (`dist/providers/<dir>.js`): the CLI's
 *   provider catalog imports them by literal specifiers, so a provider is loaded only when chosen,
 *   sharing the one bundled `@kosong/core`.
 * - The providers' SDKs and BullMQ stay external (loaded from `node_modules` when needed): they are
 *   large, load only for the provider or `--redis` that needs them, and are upgraded on their own.
 * - `@kosong/core` loads inversify and reflect-metadata with `createRequire(import.meta.url)(…)` when
 *   the kernel is first used: in the bundle that becomes a bundled `require`, still evaluated on
 *   first use (every CLI session has a kernel), resolved as an `import` is (one copy of each
 *   package). zod and ajv, loaded the same way when a session file or a JSON-Schema tool needs them,
 *   are left to load from `node_modules` then: bundled, every start would parse their code.
 * - Source maps (`*.js.map`, chained through tsc's maps to the TypeScript sources) are written next
 *   to each file; the bin turns them on so stack traces name the sources.
 *
 * @module
 */
import { build } from 'esbuild';
import { existsSync, readFileSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLI_DIR = fileURLToPath(new URL('..', import.meta.url));
const PROVIDERS_DIR = fileURLToPath(new URL('../../providers/', import.meta.url));
const OUT_DIR = `${CLI_DIR}dist`;

/** Loaded from `node_modules` at run time, never bundled. */
const EXTERNAL = ['openai', '@anthropic-ai/sdk', '@google/genai', 'bullmq', 'ioredis', '@modelcontextprotocol/sdk'];
/** Loaded from `node_modules` at run time too: what the core and the tools load on first use (`createRequire`), left unbundled. */
const LOADED_LAZILY = ['zod', 'ajv'];

/** `createRequire(import.meta.url)('inversify')` or `('reflect-metadata')`: loads of the kernel's, bundled. */
const KERNEL_REQUIRE = /\bcreateRequire\(import\.meta\.url\)\(('inversify'|'reflect-metadata')\)/g;

/** Makes the kernel's `createRequire` loads visible to the bundler, and resolves every bundled `require` of a workspace package as an `import`. */
const bundleKernelRequires = {
  name: 'bundle-kernel-requires',
  setup(build) {
    build.onLoad({ filter: /\/lib\/.*\.js$/ }, (args) => {
      if (args.path.includes('/node_modules/')) return undefined;
      const source = readFileSync(args.path, 'utf8');
      const contents = source.replace(KERNEL_REQUIRE, (_, specifier) => `require(${specifier})`);
      return contents === source ? undefined : { contents, loader: 'js' };
    });
    build.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.kind !== 'require-call' || args.pluginData === 'as-import' || args.path.startsWith('node:')) return undefined;
      if (!args.importer.includes('/lib/') || args.importer.includes('/node_modules/')) return undefined;
      const resolved = await build.resolve(args.path, { kind: 'import-statement', resolveDir: args.resolveDir, pluginData: 'as-import' });
      return resolved.errors.length > 0 ? undefined : { path: resolved.path, external: resolved.external };
    });
  },
};

/** The first-party provider packages: `providers/<dir>` is `@kosong/provider-<dir>`. */
const providers = readdirSync(PROVIDERS_DIR, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => ({ in: `${PROVIDERS_DIR}${entry.name}/lib/index.js`, out: `providers/${entry.name}` }));

const version = JSON.parse(readFileSync(`${CLI_DIR}package.json`, 'utf8')).version;

rmSync(OUT_DIR, { recursive: true, force: true });
const { metafile } = await build({
  absWorkingDir: REPO_ROOT,
  metafile: true,
  entryPoints: [{ in: `${CLI_DIR}lib/main.js`, out: 'kosong' }, ...providers],
  outdir: OUT_DIR,
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  external: EXTERNAL,
  sourcemap: 'linked',
  sourcesContent: false,
  // Classes keep their names: errors are named after their class (`EchoScriptError: …`).
  keepNames: true,
  define: { KOSONG_CLI_VERSION: JSON.stringify(version) },
  // Bundled CommonJS (commander, ajv) requires Node's modules: give it a `require` of its own.
  banner: { js: "import { createRequire as __kosongCreateRequire } from 'node:module'; const require = __kosongCreateRequire(import.meta.url);" },
  plugins: [bundleKernelRequires],
  logLevel: 'warning',
});

checkUnbundledPackages(metafile);

/**
 * The bundle loads the packages it leaves out from `node_modules` as seen from `dist/`, not from the
 * bundled package that depends on them: each must be the version that package would load (e.g. not
 * an ajv 6 hoisted for another tool where the core needs ajv 8). Otherwise the build fails, naming
 * the package to add to the CLI's own dependencies.
 */
function checkUnbundledPackages(metafile) {
  const bundled = new Set(Object.keys(metafile.inputs).filter((input) => !input.includes('node_modules/')).map((input) => packageRoot(resolve(REPO_ROOT, input))));
  const wrong = [];
  for (const root of bundled) {
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
    for (const name of [...EXTERNAL, ...LOADED_LAZILY].filter((name) => manifest.dependencies?.[name] !== undefined)) {
      const used = installedPackage(root, name);
      const loaded = installedPackage(OUT_DIR, name);
      if (used?.version !== loaded?.version) wrong.push(`${name}: ${manifest.name} uses ${describe(used)}, the bundle would load ${describe(loaded)}`);
    }
  }
  if (wrong.length > 0) throw new Error(`the bundle would load other copies of packages than the code it bundles (add them to cli/package.json's dependencies):\n${wrong.join('\n')}`);
}

/** The directory of the package the file `path` belongs to. */
function packageRoot(path) {
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`${path} is in no package`);
  }
}

/** The package `name` as Node finds it from the directory `from` (walking up through `node_modules`): its version and where it is. */
function installedPackage(from, name) {
  for (let dir = from; ; dir = dirname(dir)) {
    const manifest = join(dir, 'node_modules', name, 'package.json');
    if (existsSync(manifest)) return { version: JSON.parse(readFileSync(manifest, 'utf8')).version, dir: realpathSync(dirname(manifest)) };
    if (dirname(dir) === dir) return undefined;
  }
}

function describe(installed) {
  return installed === undefined ? 'none' : `${installed.version} (${installed.dir})`;
}
