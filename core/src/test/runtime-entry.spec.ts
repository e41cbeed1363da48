/**
 * `@kosong/core/runtime`: the step runtime without the kernel, for processes that must start fast. It
 * loads neither inversify nor zod; the package root loads inversify only when a kernel is made (or a
 * class decorated), and zod only when a message is read from JSON.
 * Module loading is watched in fresh processes, through a module-loading hook.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as root from '../index.js';
import * as kernel from '../kernel/index.js';
import * as runtime from '../runtime/index.js';

const run = promisify(execFile);
const CORE_DIR = new URL('../../', import.meta.url);

/**
 * The packages (by name) whose modules a fresh process loaded while running `code` (an ES module in
 * core's directory): imported ones, seen by a module-loading hook, and required ones, in the require
 * cache at exit.
 */
async function packagesLoadedBy(code: string): Promise<{ packages: Set<string>; builtins: Set<string>; stdout: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'kosong-runtime-entry-'));
  try {
    const hooks = join(dir, 'hooks.mjs');
    writeFileSync(
      hooks,
      "export async function load(url, context, next) { if (url.startsWith('file:')) process.stderr.write('LOADED ' + url + '\\n'); return next(url, context); }\n" +
        "export async function resolve(specifier, context, next) { if (specifier.startsWith('node:')) process.stderr.write('BUILTIN ' + specifier + '\\n'); return next(specifier, context); }\n",
    );
    const register = join(dir, 'register.mjs');
    // Modules loaded with require (CommonJS, or an ES module through require(esm)) are in the require cache at exit.
    writeFileSync(
      register,
      `import { createRequire, register } from 'node:module'; register(${JSON.stringify(pathToFileURL(hooks).href)});\n` +
        "const cache = createRequire(import.meta.url).cache; process.on('exit', () => { for (const file of Object.keys(cache)) process.stderr.write('LOADED ' + file + '\\n'); });\n",
    );
    const { stdout, stderr } = await run(process.execPath, ['--import', pathToFileURL(register).href, '--input-type=module', '-e', code], { cwd: CORE_DIR });
    const packages = new Set(
      stderr
        .split('\n')
        .filter((line) => line.startsWith('LOADED '))
        .flatMap((line) => {
          const match = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(line);
          return match ? [match[1]!] : [];
        }),
    );
    const builtins = new Set(stderr.split('\n').flatMap((line) => (line.startsWith('BUILTIN ') ? [line.slice('BUILTIN '.length)] : [])));
    return { packages, builtins, stdout };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('@kosong/core/runtime', () => {
  it('exports the very same step runtime as the package root, and the runtime\'s details the root has not', () => {
    const names = Object.keys(runtime);
    expect(names).to.include.members(['step', 'generate', 'StepResult', 'textPart', 'toolOk', 'ChatProviderError', 'messageFromJSON']);
    for (const name of names) if (name in root) expect((root as Record<string, unknown>)[name], name).to.equal((runtime as Record<string, unknown>)[name]);
    const details = names.filter((name) => !(name in root)).sort();
    expect(details).to.deep.equal([
      'DEFAULT_CLEANUP_TIMEOUT_MS',
      'DEFAULT_HOOK_TIMEOUT_MS',
      'DEFAULT_MAX_HOOK_FAILURES',
      'abortableDelay',
      'asNamedHooks',
      'checkTimeoutBudgets',
      'freezeJson',
      'freezePart',
      'isDisposalErrorReport',
      'stderrHookErrorSink',
      'writeHookErrorToStderr',
    ]);
    expect(names).to.not.include('Kernel');
  });

  it('exports everything the root does but the kernel and the agent loop (a new export of the root belongs in both)', async () => {
    const agentDir = fileURLToPath(new URL('../agent/', import.meta.url));
    const agentModules = readdirSync(agentDir).filter((file) => file.endsWith('.js'));
    const notRuntime = new Set(Object.keys(kernel));
    for (const file of agentModules) for (const name of Object.keys((await import(new URL(`../agent/${file}`, import.meta.url).href)) as object)) notRuntime.add(name);
    const missing = Object.keys(root).filter((name) => !notRuntime.has(name) && !(name in runtime));
    expect(missing, 'exported by @kosong/core but not by @kosong/core/runtime (add them to runtime/index.ts)').to.deep.equal([]);
  });

  it('runs a step in a process that loads neither inversify nor zod', async function () {
    this.timeout(30_000);
    const { packages, stdout } = await packagesLoadedBy(
      "import { step, textPart } from '@kosong/core/runtime';" +
        "const provider = { name: 'p', modelName: 'm', thinkingEffort: undefined, generation: {}, withThinking() { return this; }, withGeneration() { return this; }," +
        " async generate() { return { id: 'x', usage: undefined, async *[Symbol.asyncIterator]() { yield textPart('hi'); } }; } };" +
        "const result = await step({ provider, systemPrompt: '', toolset: { tools: [], handle() { throw new Error('no'); } }, history: [] });" +
        'console.log(result.message.content[0].text);',
    );
    expect(stdout.trim()).to.equal('hi');
    expect([...packages].filter((name) => /inversify|zod|reflect-metadata|ajv/.test(name))).to.deep.equal([]);
  });

  it('imports no node:crypto (a cold start that only imports does not pay for it); the first step id loads it', async function () {
    this.timeout(30_000);
    const imported = await packagesLoadedBy("import '@kosong/core'; import '@kosong/core/runtime';");
    expect([...imported.builtins]).to.not.include('node:crypto');
    expect(imported.builtins.size, 'the hook sees node: imports').to.be.greaterThan(0);
    const { stdout } = await packagesLoadedBy(
      "import { step, textPart } from '@kosong/core/runtime';" +
        "const provider = { name: 'p', modelName: 'm', thinkingEffort: undefined, generation: {}, withThinking() { return this; }, withGeneration() { return this; }," +
        " async generate() { return { id: 'x', usage: undefined, async *[Symbol.asyncIterator]() { yield textPart('hi'); } }; } };" +
        "const ids = new Set(); for (let i = 0; i < 3; i++) ids.add((await step({ provider, systemPrompt: '', toolset: { tools: [], handle() { throw new Error('no'); } }, history: [] })).stepId);" +
        'console.log([...ids].join(" "));',
    );
    const ids = stdout.trim().split(' ');
    expect(new Set(ids).size).to.equal(3);
    for (const id of ids) expect(id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('structured output loads ajv for a JSON Schema when a step first asks for one, and still no zod', async function () {
    this.timeout(30_000);
    const { packages, stdout } = await packagesLoadedBy(
      "import { step, textPart } from '@kosong/core/runtime';" +
        "const provider = { name: 'p', modelName: 'm', thinkingEffort: undefined, generation: {}, withThinking() { return this; }, withGeneration() { return this; }," +
        " async generate() { return { id: 'x', usage: undefined, async *[Symbol.asyncIterator]() { yield textPart('{\"n\": 1}'); } }; } };" +
        "const output = { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] };" +
        "const result = await step({ provider, systemPrompt: '', toolset: { tools: [], handle() { throw new Error('no'); } }, history: [], output });" +
        'console.log(JSON.stringify(result.output));',
    );
    expect(stdout.trim()).to.equal('{"n":1}');
    expect(packages.has('ajv')).to.equal(true);
    expect([...packages].filter((name) => /inversify|zod|reflect-metadata/.test(name))).to.deep.equal([]);
  });

  it('the root loads inversify when the first kernel is made, not before; decorated classes work either way', async function () {
    this.timeout(30_000);
    const before = await packagesLoadedBy("import '@kosong/core';");
    expect([...before.packages].filter((name) => name.includes('inversify'))).to.deep.equal([]);
    const after = await packagesLoadedBy(
      "import { Kernel, definePlugin } from '@kosong/core'; import { injectable, inject } from '@kosong/core/kernel';" +
        "const Greeting = Symbol('Greeting');" +
        'class Greeter { constructor(text) { this.text = text; } }' +
        'injectable()(Greeter); inject(Greeting)(Greeter, undefined, 0);' +
        'const kernel = new Kernel();' +
        "await kernel.use(definePlugin({ name: 'p', setup: (ctx) => { ctx.bind(Greeting).toConstantValue('hi'); ctx.bind(Greeter).toSelf(); } }));" +
        'console.log(kernel.container.get(Greeter).text);',
    );
    expect(after.stdout.trim()).to.equal('hi');
    expect(after.packages.has('inversify')).to.equal(true);
  });

  it('the root loads zod when the first message is read from JSON, not before', async function () {
    this.timeout(30_000);
    const before = await packagesLoadedBy("import '@kosong/core';");
    expect(before.packages.has('zod')).to.equal(false);
    const after = await packagesLoadedBy(
      "import { messageFromJSON, MessageValidationError } from '@kosong/core';" +
        "console.log(JSON.stringify(messageFromJSON({ role: 'user', content: 'hi' })));" +
        "try { messageFromJSON({ role: 'nobody', content: [] }); } catch (e) { console.log(e instanceof MessageValidationError, e.path); }",
    );
    expect(after.stdout.trim().split('\n')).to.deep.equal(['{"role":"user","content":[{"type":"text","text":"hi"}]}', 'true $.role']);
    expect(after.packages.has('zod')).to.equal(true);
  });
});
