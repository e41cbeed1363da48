import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { expect } from 'chai';

import { textReply, wireChunk, wireFunctionCall, wireText } from '../testing/index.js';
import { TEST_KEY, useServer } from './support.js';

/** The `kosong` command of this repository as users run it: its bin (`cli/bin/kosong.js`), found from its package entry (`cli/lib/index.js`). */
const CLI_BIN = join(dirname(fileURLToPath(import.meta.resolve('@kosong/cli'))), '..', 'bin', 'kosong.js');

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the CLI in `cwd` with exactly this environment (plus PATH), no TTY. */
function kosong(args: readonly string[], env: Readonly<Record<string, string>>, cwd: string): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI_BIN, ...args],
      { cwd, env: { PATH: process.env['PATH'] ?? '', NO_COLOR: '1', TERM: 'dumb', ...env }, timeout: 20_000 },
      (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: unknown }).code as number) : 0, stdout, stderr }),
    );
  });
}

describe('kosong --provider gemini (the CLI, end to end against a local Gemini server)', function () {
  this.timeout(30_000);
  const ctx = useServer();
  let cwd: string;
  beforeEach(async () => {
    cwd = await mkdtemp(join(tmpdir(), 'kosong-gemini-cli-'));
  });
  afterEach(async () => {
    await rm(cwd, { recursive: true, force: true });
  });

  it('`kosong providers` lists gemini', async () => {
    const run = await kosong(['providers'], {}, cwd);
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout).to.match(/^\s*gemini\b.*GEMINI_API_KEY/m);
  });

  it('runs a turn: a parallel tool call with the built-in calculator, then the answer', async () => {
    ctx.server.reply(
      {
        type: 'stream',
        events: [
          wireChunk({ parts: [wireText('Let me compute.')] }),
          wireChunk({
            parts: [wireFunctionCall('calculate', { expression: '6 * 7' }, { thoughtSignature: 'c2ln' }), wireFunctionCall('calculate', { expression: '2 + 2' })],
            finishReason: 'STOP',
            usage: { promptTokenCount: 120, candidatesTokenCount: 9 },
          }),
        ],
      },
      textReply(['6 × 7 = 42 and 2 + 2 = 4.']),
    );
    const run = await kosong(['--provider', 'gemini', 'run', 'What', 'is', '6*7', 'and', '2+2?'], { GEMINI_API_KEY: TEST_KEY, GEMINI_BASE_URL: ctx.server.url, GEMINI_MODEL: 'gemini-cli-test' }, cwd);
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout).to.contain('Let me compute.');
    expect(run.stdout).to.contain('6 * 7 = 42');
    expect(run.stdout).to.contain('2 + 2 = 4');
    expect(run.stdout).to.contain('6 × 7 = 42 and 2 + 2 = 4.');
    expect(ctx.server.requests.map((request) => request.model)).to.deep.equal(['gemini-cli-test', 'gemini-cli-test']);
    const second = ctx.server.requests[1]!.body as { contents: { role: string; parts: Record<string, unknown>[] }[] };
    expect(second.contents.at(-2)!.parts[1]).to.deep.equal({ functionCall: { name: 'calculate', args: { expression: '6 * 7' } }, thoughtSignature: 'c2ln' });
    expect(second.contents.at(-1)!.parts.map((part) => (part['functionResponse'] as { response: { output: string } }).response.output)).to.deep.equal(['42', '4']);
  });

  it('--max-tokens and --temperature reach generationConfig of every request', async () => {
    ctx.server.reply(textReply(['Short.']));
    const run = await kosong(['--provider', 'gemini', '--max-tokens', '64', '--temperature', '0.4', 'run', 'hi'], { GEMINI_API_KEY: TEST_KEY, GEMINI_BASE_URL: ctx.server.url }, cwd);
    expect(run.code, run.stderr).to.equal(0);
    expect((ctx.server.lastRequest.body as { generationConfig: unknown }).generationConfig).to.deep.equal({ maxOutputTokens: 64, temperature: 0.4 });
  });

  it('a Gemini error ends the turn with exit code 1 and says why, without the key', async () => {
    ctx.server.reply((request, response) => {
      response.writeHead(400, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { code: 400, status: 'INVALID_ARGUMENT', message: `bad key ${String(request.headers['x-goog-api-key'])}` } }));
    });
    const run = await kosong(['--provider', 'gemini', 'run', 'hi'], { GEMINI_API_KEY: TEST_KEY, GEMINI_BASE_URL: ctx.server.url }, cwd);
    expect(run.code).to.equal(1);
    expect(run.stdout + run.stderr).to.contain('HTTP error (400 INVALID_ARGUMENT): bad key [REDACTED]');
    expect(run.stdout + run.stderr).to.not.contain(TEST_KEY);
  });

  it('without a key: exit code 2, naming the variable', async () => {
    const run = await kosong(['--provider', 'gemini', 'run', 'hi'], {}, cwd);
    expect(run.code).to.equal(2);
    expect(run.stderr).to.match(/GEMINI_API_KEY/);
    expect(ctx.server.requests).to.have.length(0);
  });
});
