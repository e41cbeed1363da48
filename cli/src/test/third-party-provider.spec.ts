/**
 * A third party's provider package, installed next to the CLI, runs through the bundle: it is found
 * in `node_modules`, imported from there with its own copy of `@kosong/core` (not the bundle's), and
 * the errors it throws (made by that copy's classes) are still classified by the bundle's runtime:
 * retried when retryable, reported with their status otherwise.
 *
 * The install is made in a temporary directory as npm would: `node_modules/@kosong/cli` (the bin,
 * the bundle and the manifest, copied), `node_modules/@kosong/core` (a link to this repository's
 * core) and the provider package `node_modules/@kosong/provider-acme`.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jsonEvents, scaled } from './cli-harness.js';

const CLI_DIR = fileURLToPath(new URL('../../', import.meta.url));
const CORE_DIR = fileURLToPath(new URL('../../../core/', import.meta.url));

/**
 * The provider `acme`: fails its first calls as `ACME_FAILURES` says (a comma-separated list:
 * `connection`, or an HTTP status), then streams one text; it says which `@kosong/core` it uses.
 */
const ACME_PROVIDER = `
import { APIConnectionError, APIStatusError, definePlugin } from '@kosong/core';
import { noGenerationOptions } from '@kosong/core/provider-kit';

process.stderr.write('acme core: ' + import.meta.resolve('@kosong/core') + '\\n');
const failures = (process.env.ACME_FAILURES ?? '').split(',').filter((failure) => failure !== '');

class AcmeChatProvider {
  name = 'acme';
  modelName = 'acme-1';
  thinkingEffort = undefined;
  generation = noGenerationOptions();
  async generate() {
    const failure = failures.shift();
    if (failure === 'connection') throw new APIConnectionError('acme: connection reset');
    if (failure !== undefined) throw new APIStatusError(Number(failure), 'acme: status ' + failure, { retryAfterSeconds: 0 });
    return {
      id: 'acme-response',
      usage: undefined,
      async *[Symbol.asyncIterator]() {
        yield { type: 'text', text: 'hello from acme' };
      },
    };
  }
  withThinking() {
    return this;
  }
  withGeneration() {
    return this;
  }
}

export const providerPlugins = [
  {
    name: 'acme',
    description: 'a third party provider',
    create: () => definePlugin({ name: 'provider:acme', setup: (ctx) => ctx.bindChatProvider('acme', new AcmeChatProvider(), { default: true }) }),
  },
];
`;

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

describe('kosong CLI: a third-party provider package with its own @kosong/core', function () {
  this.timeout(60_000);
  let app: string;
  let bin: string;

  before(() => {
    app = realpathSync(mkdtempSync(join(tmpdir(), 'kosong-third-party-')));
    const scope = join(app, 'node_modules', '@kosong');
    const cli = join(scope, 'cli');
    mkdirSync(cli, { recursive: true });
    for (const part of ['bin', 'dist', 'package.json']) cpSync(join(CLI_DIR, part), join(cli, part), { recursive: true });
    bin = join(cli, 'bin', 'kosong.js');
    symlinkSync(CORE_DIR, join(scope, 'core'), 'dir');
    const acme = join(scope, 'provider-acme');
    mkdirSync(acme);
    writeFileSync(
      join(acme, 'package.json'),
      JSON.stringify({
        name: '@kosong/provider-acme',
        type: 'module',
        exports: './index.js',
        dependencies: { '@kosong/core': '0.1.0' },
        kosong: { providerPlugins: [{ name: 'acme', description: 'a third party provider' }] },
      }),
    );
    writeFileSync(join(acme, 'index.js'), ACME_PROVIDER);
  });
  after(() => rmSync(app, { recursive: true, force: true }));

  function kosong(args: readonly string[], failures: string): Promise<Run> {
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', TERM: 'dumb', ACME_FAILURES: failures };
    delete env['NODE_OPTIONS'];
    return new Promise((resolve) => {
      execFile(process.execPath, [bin, ...args], { cwd: app, env, timeout: scaled(30_000) }, (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number | null }).code ?? null) : 0, stdout, stderr }),
      );
    });
  }

  it('is listed by `kosong providers` without being loaded', async () => {
    const run = await kosong(['providers'], '');
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout).to.match(/^acme +a third party provider$/m);
    expect(run.stderr).not.to.contain('acme core');
  });

  it('runs a turn with its own copy of @kosong/core: a 503 and a connection error are retried, then its text is shown', async () => {
    const run = await kosong(['--provider', 'acme', '--json', 'run', 'hi'], '503,connection');
    expect(run.code, run.stderr).to.equal(0);
    // The provider's core is the one in node_modules (this repository's core/lib), not the bundle.
    const core = /^acme core: (.*)$/m.exec(run.stderr)?.[1];
    expect(core, run.stderr).to.equal(new URL('lib/index.js', `file://${CORE_DIR}`).href);
    const events = jsonEvents(run.stdout);
    const retries = events.filter((event) => event.type === 'retry');
    expect(retries.map((event) => [event['attempt'], event['error']])).to.deep.equal([
      [1, { name: 'APIStatusError', message: 'acme: status 503', statusCode: 503 }],
      [2, { name: 'APIConnectionError', message: 'acme: connection reset' }],
    ]);
    expect(run.stdout).to.contain('hello from acme');
    expect(events.at(-1)).to.include({ type: 'turn_end', steps: 1 });
  });

  it('a status that is not retryable (400) fails the turn at once, exit 1, its status reported', async () => {
    const run = await kosong(['--provider', 'acme', '--json', 'run', 'hi'], '400');
    expect(run.code).to.equal(1);
    const events = jsonEvents(run.stdout);
    expect(events.filter((event) => event.type === 'retry')).to.deep.equal([]);
    expect(events.at(-1)).to.deep.equal({ type: 'turn_failed', error: { name: 'APIStatusError', message: 'acme: status 400', statusCode: 400 } });
  });

  it('out of attempts (three 503s), the turn fails after two retries', async () => {
    const run = await kosong(['--provider', 'acme', '--json', 'run', 'hi'], '503,503,503');
    expect(run.code).to.equal(1);
    const events = jsonEvents(run.stdout);
    expect(events.filter((event) => event.type === 'retry').map((event) => event['attempt'])).to.deep.equal([1, 2]);
    expect(events.at(-1)).to.deep.include({ type: 'turn_failed' });
  });
});
