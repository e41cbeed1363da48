/**
 * The packages install outside the repository (issue 21, item 18): every publishable workspace is
 * packed (`npm pack`, the tarballs npm would publish), the tarballs are installed into an empty
 * folder, and the installed command and libraries are used there: `npx kosong --help`, the demo,
 * one `step()`, one kernel runner step. The CLI alone brings no BullMQ (nor ioredis, nor
 * `msgpackr-extract` and its install script): `--redis` says what to install; once `@kosong/bullmq`
 * is installed too, `--redis` loads it.
 *
 * One pack and one install per run (in `before`), then a second install of `@kosong/bullmq` into
 * the same folder. The install is `--offline` when npm's cache has every package (it then takes
 * some seconds), else `--prefer-offline` (the registry is asked only for what the cache lacks).
 */
import { expect } from 'chai';
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const NPM_FLAGS = ['--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'];

interface Manifest {
  readonly name: string;
  readonly private?: boolean;
  readonly workspaces?: readonly string[];
}

function readManifest(dir: string): Manifest {
  return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;
}

/** The workspaces of the repository that are published (not `private`), as directories relative to the root. */
function publishableWorkspaces(): string[] {
  const dirs = (readManifest(ROOT).workspaces ?? []).flatMap((pattern) => {
    if (!pattern.endsWith('/*')) return [pattern];
    const parent = pattern.slice(0, -2);
    return readdirSync(join(ROOT, parent), { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && existsSync(join(ROOT, parent, entry.name, 'package.json')))
      .map((entry) => `${parent}/${entry.name}`);
  });
  return dirs.filter((dir) => readManifest(join(ROOT, dir)).private !== true);
}

function run(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = {}): SpawnSyncReturns<string> {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', ...env }, timeout: 240_000 });
  if (result.error) throw result.error;
  return result;
}

/** `npm install` of these specs into `cwd`: offline when the cache has it all, else preferring the cache. */
function npmInstall(cwd: string, specs: readonly string[]): { mode: string; ms: number } {
  const started = Date.now();
  const offline = run('npm', ['install', '--offline', ...NPM_FLAGS, ...specs], cwd);
  if (offline.status === 0) return { mode: 'offline', ms: Date.now() - started };
  expect(offline.stderr, 'an offline install fails only for what the cache lacks').to.include('ENOTCACHED');
  const online = run('npm', ['install', '--prefer-offline', ...NPM_FLAGS, ...specs], cwd);
  expect(online.status, online.stderr).to.equal(0);
  return { mode: 'prefer-offline', ms: Date.now() - started };
}

describe('packaging: the packed workspaces install and run outside the repository', function () {
  this.timeout(60_000);
  let dir: string;
  let app: string;
  const tarballs = new Map<string, string>();

  before(function () {
    this.timeout(300_000);
    dir = mkdtempSync(join(tmpdir(), 'kosong-packaging-'));
    const packed = join(dir, 'tarballs');
    mkdirSync(packed);
    const started = Date.now();
    const workspaces = publishableWorkspaces();
    // What `npm publish` would upload, from the build `npm test` has just made.
    const pack = run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', packed, ...workspaces.flatMap((ws) => ['-w', ws])], ROOT);
    expect(pack.status, pack.stderr).to.equal(0);
    for (const { name, filename } of JSON.parse(pack.stdout) as Array<{ name: string; filename: string }>) tarballs.set(name, join(packed, filename));
    const packMs = Date.now() - started;
    app = join(dir, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), `${JSON.stringify({ name: 'kosong-outside', private: true, type: 'module' }, null, 2)}\n`);
    const install = npmInstall(app, [...tarballs].filter(([name]) => name !== '@kosong/bullmq').map(([, file]) => file));
    console.log(`      (packed ${tarballs.size} packages in ${packMs} ms; installed all but @kosong/bullmq in ${install.ms} ms, ${install.mode})`);
  });
  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('packs every workspace that is not private', () => {
    expect([...tarballs.keys()].sort()).to.deep.equal(publishableWorkspaces().map((ws) => readManifest(join(ROOT, ws)).name).sort());
    expect(tarballs.size).to.be.at.least(10);
  });

  it('the CLI brings no BullMQ: neither bullmq, ioredis nor msgpackr-extract (and its install script) is installed', () => {
    expect(existsSync(join(app, 'node_modules', '@kosong', 'cli', 'dist', 'kosong.js')), 'the CLI and its bundle').to.equal(true);
    for (const name of ['@kosong/bullmq', 'bullmq', 'ioredis', 'msgpackr', 'msgpackr-extract']) {
      expect(existsSync(join(app, 'node_modules', name)), name).to.equal(false);
    }
  });

  it('`npx kosong --help` runs the installed command', () => {
    const help = run('npx', ['--no-install', 'kosong', '--help'], app);
    expect(help.stderr).to.equal('');
    expect(help.status).to.equal(0);
    expect(help.stdout).to.match(/^Usage: kosong \[options\] \[command\]/);
  });

  it('`npx kosong run` plays the demo with the built-in tools, and `kosong providers` lists the installed provider packages', () => {
    const demo = run('npx', ['--no-install', 'kosong', 'run', 'Show me around'], app);
    expect(demo.status, demo.stderr).to.equal(0);
    expect(demo.stdout).to.include('✓ #2 read_file: Read package.json').and.match(/^— 3 steps /m);
    const providers = run('npx', ['--no-install', 'kosong', 'providers'], app);
    expect(providers.status, providers.stderr).to.equal(0);
    const names = providers.stdout.split('\n').map((line) => line.split(' ', 1)[0]);
    expect(names).to.include.members(['demo', 'echo', 'openai', 'anthropic', 'gemini']);
  });

  it('one step() with a tool, from the installed @kosong/core, @kosong/provider-echo and @kosong/toolset-simple', () => {
    writeFileSync(
      join(app, 'one-step.js'),
      [
        "import { createMessage, step } from '@kosong/core';",
        "import { EchoChatProvider } from '@kosong/provider-echo';",
        "import { SimpleToolset, defineTool } from '@kosong/toolset-simple';",
        "import { z } from 'zod';",
        "const add = defineTool({ name: 'add', description: 'Adds.', parameters: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => String(a + b) });",
        'const script = \'text: Adding.\\ntool_call: {"id": "c1", "name": "add", "arguments": "{\\\\"a\\\\": 2, \\\\"b\\\\": 3}"}\';',
        "const result = await step({ provider: new EchoChatProvider(), systemPrompt: '', toolset: new SimpleToolset([add]), history: [createMessage('user', script)] });",
        'const [added] = await result.toolResults();',
        "console.log(`${result.message.content.map((p) => p.text).join('')} ${added.toolCallId}=${added.returnValue.output}`);",
      ].join('\n'),
    );
    const stepped = run(process.execPath, ['one-step.js'], app);
    expect(stepped.stderr).to.equal('');
    expect(stepped.status).to.equal(0);
    expect(stepped.stdout).to.equal('Adding. c1=5\n');
  });

  it('one kernel runner step: a plugin, a tenant with its own toolset', () => {
    writeFileSync(
      join(app, 'kernel-step.js'),
      [
        "import { Kernel, createMessage, definePlugin, textPart, toolOk } from '@kosong/core';",
        "import { MockChatProvider } from '@kosong/provider-echo';",
        'const kernel = new Kernel();',
        "await kernel.use(definePlugin({ name: 'mock', setup: (ctx) => ctx.bindChatProvider('mock', new MockChatProvider([textPart('hello from the kernel')]), { default: true }) }));",
        "kernel.tenants.define('acme', { toolset: { tools: [], handle: (call) => ({ toolCallId: call.id, returnValue: toolOk({ output: '' }) }) } });",
        "const result = await kernel.runner({ tenant: 'acme' }).step({ systemPrompt: '', history: [createMessage('user', 'hi')] });",
        "console.log(result.message.content.map((p) => p.text).join(''));",
        'await kernel.dispose();',
      ].join('\n'),
    );
    const stepped = run(process.execPath, ['kernel-step.js'], app);
    expect(stepped.stderr).to.equal('');
    expect(stepped.status).to.equal(0);
    expect(stepped.stdout).to.equal('hello from the kernel\n');
  });

  it('every face of the installed @kosong/core loads by its subpath (each in the exports, its files packed)', () => {
    const manifest = JSON.parse(readFileSync(join(app, 'node_modules', '@kosong', 'core', 'package.json'), 'utf8')) as { exports: Record<string, { types: string }> };
    const subpaths = Object.keys(manifest.exports);
    expect(subpaths).to.include.members(['.', './provider-kit', './toolset-kit', './context-kit', './kernel', './runtime', './testing', './json-schema']);
    for (const subpath of subpaths) {
      expect(existsSync(join(app, 'node_modules', '@kosong', 'core', manifest.exports[subpath]!.types)), `${subpath}: its types`).to.equal(true);
    }
    const specifiers = subpaths.map((subpath) => `@kosong/core${subpath.slice(1)}`);
    const code = `for (const specifier of ${JSON.stringify(specifiers)}) console.log(specifier, Object.keys(await import(specifier)).length > 0);`;
    const loaded = run(process.execPath, ['--input-type=module', '-e', code], app);
    expect(loaded.stderr).to.equal('');
    expect(loaded.stdout.trim().split('\n')).to.deep.equal(specifiers.map((specifier) => `${specifier} true`));
  });

  it('--redis without @kosong/bullmq says what to install: exit 2, before anything runs', () => {
    const message =
      'kosong: --redis needs BullMQ, which the CLI does not install (it is an optional peer dependency): ' +
      'install @kosong/bullmq next to it (npm install @kosong/bullmq; for a global kosong, npm install -g @kosong/bullmq)\n';
    for (const args of [['--redis', 'redis://127.0.0.1:1', 'run', 'hi'], ['--redis', 'redis://127.0.0.1:1', 'worker']]) {
      const refused = run('npx', ['--no-install', 'kosong', ...args], app);
      expect(refused.status, args.join(' ')).to.equal(2);
      expect(refused.stdout, args.join(' ')).to.equal('');
      expect(refused.stderr, args.join(' ')).to.equal(message);
    }
  });

  describe('with @kosong/bullmq installed too', () => {
    before(function () {
      this.timeout(300_000);
      const install = npmInstall(app, [tarballs.get('@kosong/bullmq')!]);
      console.log(`      (installed @kosong/bullmq in ${install.ms} ms, ${install.mode})`);
    });

    it('brings BullMQ, and `kosong --redis … worker` loads it (it goes on to connect)', async () => {
      expect(existsSync(join(app, 'node_modules', 'bullmq')), 'bullmq').to.equal(true);
      const imported = run(process.execPath, ['--input-type=module', '-e', "const m = await import('@kosong/bullmq'); console.log(typeof m.TurnQueue);"], app);
      expect(imported.stdout, imported.stderr).to.equal('function\n');
      // The worker says it connects only once BullMQ is loaded; the Redis is not there, so it waits: stop it.
      const worker = spawn('npx', ['--no-install', 'kosong', '--redis', 'redis://127.0.0.1:1', 'worker'], { cwd: app, env: { ...process.env, NO_COLOR: '1' }, detached: true });
      let stdout = '';
      let stderr = '';
      worker.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      worker.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const exited = new Promise<void>((resolve) => worker.on('close', () => resolve()));
      try {
        const deadline = Date.now() + 30_000;
        while (!stdout.includes('kosong worker: connecting to redis://127.0.0.1:1') && worker.exitCode === null && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        expect(stdout, stderr).to.include('kosong worker: connecting to redis://127.0.0.1:1');
        expect(stderr).not.to.include('needs BullMQ');
      } finally {
        try {
          process.kill(-worker.pid!, 'SIGKILL'); // npx and the CLI under it
        } catch {
          // gone
        }
        await exited;
      }
    });
  });
});
