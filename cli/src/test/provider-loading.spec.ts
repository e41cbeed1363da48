/**
 * The CLI loads a provider's package (and its SDK) only when that provider is chosen: provider
 * packages list their providers in their `package.json`, which must say what they export. The
 * command users run is the bundle (`cli/dist`): a first-party provider is a file of it
 * (`dist/providers/<dir>.js`) sharing its one `@kosong/core`. Module loading is watched in the
 * CLI's own process (a module-loading hook, and the require cache at exit).
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { FIRST_PARTY_PROVIDERS, providersOf } from '../provider-catalog.js';
import { CLI_BIN } from './cli-harness.js';

const run = promisify(execFile);
const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const PROVIDERS_DIR = join(REPO_ROOT, 'providers');
const SDKS = ['openai', '@anthropic-ai/sdk', '@google/genai'];

/** What a CLI process loaded: the packages (by name), the files outside the bin and the bundle (relative to the repository), and its output. */
interface Loading {
  readonly packages: Set<string>;
  readonly outsideBundle: string[];
  readonly stdout: string;
}

/**
 * The packages (by name) a CLI process loaded, and what it wrote. A first-party provider counts by
 * its package's name whether it is loaded from the bundle (`cli/dist/providers/echo.js` is
 * `@kosong/provider-echo`), from `node_modules`, or as a workspace at its own path.
 */
async function cliLoading(args: readonly string[], cwd: string): Promise<Loading> {
  const dir = mkdtempSync(join(tmpdir(), 'kosong-cli-modules-'));
  try {
    const hooks = join(dir, 'hooks.mjs');
    writeFileSync(hooks, "export async function load(url, context, next) { if (url.startsWith('file:')) process.stderr.write('LOADED ' + url + '\\n'); return next(url, context); }\n");
    const register = join(dir, 'register.mjs');
    writeFileSync(
      register,
      `import { createRequire, register } from 'node:module'; register(${JSON.stringify(pathToFileURL(hooks).href)});\n` +
        "const cache = createRequire(import.meta.url).cache; process.on('exit', () => { for (const file of Object.keys(cache)) process.stderr.write('LOADED ' + file + '\\n'); });\n",
    );
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', TERM: 'dumb' };
    delete env['NODE_OPTIONS'];
    const { stdout, stderr } = await run(process.execPath, ['--import', pathToFileURL(register).href, CLI_BIN, ...args], { cwd, env });
    const files = stderr.split('\n').flatMap((line) => {
      if (!line.startsWith('LOADED ')) return [];
      const file = line.slice('LOADED '.length);
      return [file.startsWith('file:') ? fileURLToPath(file) : file];
    });
    const packages = new Set(
      files.flatMap((file) => {
        const dependency = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file);
        if (dependency) return [dependency[1]!];
        const bundled = /^cli\/dist\/providers\/([^/]+)\.js$/.exec(relative(REPO_ROOT, file).split(sep).join('/'));
        if (bundled) return [`@kosong/provider-${bundled[1]!}`];
        const workspace = /^providers\/([^/]+)\//.exec(relative(REPO_ROOT, file).split(sep).join('/'));
        return workspace ? [`@kosong/provider-${workspace[1]!}`] : [];
      }),
    );
    const outsideBundle = files.map((file) => relative(REPO_ROOT, file).split(sep).join('/')).filter((file) => !/^cli\/(bin|dist)\//.test(file));
    return { packages, outsideBundle, stdout };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('kosong CLI: loading providers when chosen', function () {
  this.timeout(60_000);
  let cwd: string;
  before(() => (cwd = mkdtempSync(join(tmpdir(), 'kosong-cli-loading-'))));
  after(() => rmSync(cwd, { recursive: true, force: true }));

  it('every provider package lists in its package.json exactly the providers it exports', async () => {
    for (const dir of readdirSync(PROVIDERS_DIR)) {
      const manifest = JSON.parse(readFileSync(join(PROVIDERS_DIR, dir, 'package.json'), 'utf8')) as {
        name: string;
        kosong?: { providerPlugins?: unknown };
      };
      const module = (await import(manifest.name)) as { providerPlugins?: readonly { name: string; description: string }[] };
      const exported = (module.providerPlugins ?? []).map(({ name, description }) => ({ name, description }));
      expect(manifest.kosong?.providerPlugins ?? [], manifest.name).to.deep.equal(exported);
    }
  });

  it('the catalog imports every first-party package that offers CLI providers (each is a file of the bundle)', () => {
    const manifests = readdirSync(PROVIDERS_DIR).map((dir) => ({
      dir,
      ...(JSON.parse(readFileSync(join(PROVIDERS_DIR, dir, 'package.json'), 'utf8')) as { name: string; kosong?: { providerPlugins?: readonly unknown[] } }),
    }));
    // A package that lists no providers (a model fallback is built in code, not chosen by name) is not in the catalog.
    const offering = manifests.filter((m) => (m.kosong?.providerPlugins?.length ?? 1) > 0);
    expect(Object.keys(FIRST_PARTY_PROVIDERS).sort()).to.deep.equal(offering.map((m) => m.name).sort());
    for (const { dir } of offering) expect(readdirSync(join(REPO_ROOT, 'cli', 'dist', 'providers')), dir).to.include(`${dir}.js`);
  });

  it('--help loads the bundle alone: no provider package, no SDK, no kernel, no zod and no BullMQ', async () => {
    const { packages, outsideBundle, stdout } = await cliLoading(['--help'], cwd);
    expect(stdout).to.contain('Usage: kosong');
    const heavy = [...packages].filter((name) => name.startsWith('@kosong/provider-') || SDKS.includes(name) || /inversify|bullmq|ioredis|zod/.test(name));
    expect(heavy).to.deep.equal([]);
    expect(outsideBundle).to.deep.equal([]);
  });

  it('`kosong providers` lists every provider without loading any provider package', async () => {
    const { packages, stdout } = await cliLoading(['providers'], cwd);
    const names = stdout.trimEnd().split('\n').map((line) => line.split(/\s+/, 1)[0]);
    expect(names).to.include.members(['demo', 'echo', 'openai', 'openai-responses', 'kimi', 'anthropic', 'gemini']);
    expect([...packages].filter((name) => name.startsWith('@kosong/provider-') || SDKS.includes(name))).to.deep.equal([]);
  });

  it('a turn with --provider echo loads the echo package from the bundle, no SDK, and nothing outside the bundle (one core, inversify bundled, no zod)', async () => {
    const { packages, outsideBundle, stdout } = await cliLoading(['--provider', 'echo', 'run', 'text: hi'], cwd);
    expect(stdout).to.contain('hi');
    expect([...packages]).to.deep.equal(['@kosong/provider-echo']);
    expect(outsideBundle).to.deep.equal([]);
  });

  describe('a provider package', () => {
    let dir: string;
    beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'kosong-provider-package-'))));
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    const write = (manifest: object, code: string): string => {
      mkdirSync(join(dir, 'lib'));
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'fake', type: 'module', ...manifest }));
      writeFileSync(join(dir, 'lib', 'index.js'), code);
      return pathToFileURL(join(dir, 'lib', 'index.js')).href;
    };
    const factories = "export const providerPlugins = [{ name: 'fake', description: 'a fake', create: () => ({ name: 'fake plugin' }) }];\n";

    it('that lists its providers is loaded only when one is chosen', async () => {
      const url = write({ kosong: { providerPlugins: [{ name: 'fake', description: 'a fake' }] } }, `globalThis.fakeLoaded = true;\n${factories}`);
      const entries = await providersOf(url, dir);
      expect(entries.map(({ name, description }) => ({ name, description }))).to.deep.equal([{ name: 'fake', description: 'a fake' }]);
      expect((globalThis as { fakeLoaded?: boolean }).fakeLoaded).to.equal(undefined);
      const factory = await entries[0]!.load();
      expect((globalThis as { fakeLoaded?: boolean }).fakeLoaded).to.equal(true);
      expect(factory.create({})).to.deep.equal({ name: 'fake plugin' });
      delete (globalThis as { fakeLoaded?: boolean }).fakeLoaded;
    });

    it('that lists none (or a malformed list) is loaded to read its providers', async () => {
      const url = write({ kosong: { providerPlugins: [{ name: 7 }] } }, factories);
      expect((await providersOf(url, dir)).map((entry) => entry.name)).to.deep.equal(['fake']);
    });

    it('that lists a provider it does not export fails when that one is chosen, naming it', async () => {
      const url = write({ kosong: { providerPlugins: [{ name: 'ghost', description: 'not there' }] } }, factories);
      const [entry] = await providersOf(url, dir);
      await entry!.load().then(
        () => expect.fail('loaded a provider the package does not export'),
        (error: unknown) => expect(String(error)).to.contain('"ghost"'),
      );
    });

    it('that does not load offers nothing', async () => {
      const url = write({}, "throw new Error('broken package');\n");
      expect(await providersOf(url, dir)).to.deep.equal([]);
    });
  });
});
