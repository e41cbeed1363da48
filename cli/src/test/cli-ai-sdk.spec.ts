/**
 * `kosong --provider ai-sdk --model <package>:<model-id>`: any AI SDK provider package, loaded
 * from the `node_modules` where kosong runs (else next to the CLI), its key from the package's own
 * environment variables; what to install when it is not there. Real packages over real HTTP to
 * the local Messages API and Chat Completions servers.
 */
import { MessagesServer, textReply as messagesText } from '@kosong/provider-anthropic/testing';
import { ChatCompletionsServer, textReply } from '@kosong/provider-openai/testing';
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { CLI_BIN, jsonEvents, killLeftovers, makeWorkspace, runCli, scaled, type CliExit, type Workspace } from './cli-harness.js';

/** A provider package `@acme/ai` in the AI SDK's shape, installed only in the workspace: its model answers with its id. */
const ACME = `
export function createAcme() {
  const languageModel = (modelId) => ({
    specificationVersion: 'v4', provider: 'acme.chat', modelId, supportedUrls: {},
    doGenerate: async () => { throw new Error('not used'); },
    doStream: async () => ({ stream: new ReadableStream({ start(c) {
      c.enqueue({ type: 'text-delta', id: 't', delta: 'acme model ' + modelId });
      c.enqueue({ type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: { inputTokens: { total: 3 }, outputTokens: { total: 4 } } });
      c.close();
    } }) }),
  });
  return Object.assign((modelId) => languageModel(modelId), { languageModel });
}
export const acme = createAcme();
`;

/**
 * Runs the CLI with exactly this environment (the process's, less `drop`, plus `env`): for a
 * variable that must be unset. With `ownBin`, the first argument is the bin to run.
 */
function runWith(args: readonly string[], cwd: string, env: Readonly<Record<string, string>>, drop: readonly string[], ownBin = false): Promise<CliExit> {
  const full: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', TERM: 'dumb', ...env };
  for (const name of [...drop, 'NODE_OPTIONS', 'FORCE_COLOR']) delete full[name];
  return new Promise((resolve) => {
    execFile(process.execPath, ownBin ? args : [CLI_BIN, ...args], { cwd, env: full, timeout: scaled(30_000) }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number | null }).code ?? null) : 0, signal: null, stdout, stderr }),
    );
  });
}

describe('kosong CLI: --provider ai-sdk', function () {
  this.timeout(60_000);
  let ws: Workspace;

  beforeEach(() => (ws = makeWorkspace()));
  afterEach(() => {
    killLeftovers();
    ws.remove();
  });

  it('is listed by `kosong providers`', async () => {
    const run = await runCli(['providers'], ws.cwd);
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout).to.match(/^ai-sdk +any AI SDK provider package: --model <package>:<model-id>/m);
  });

  it('@ai-sdk/anthropic: the key and base URL from its own variables (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL), one turn over HTTP', async () => {
    const server = await MessagesServer.start({ defaultReply: messagesText(['Hello ', 'from the Messages API.']) });
    try {
      const env = { ANTHROPIC_API_KEY: 'sk-ant-cli-0123456789', ANTHROPIC_BASE_URL: `${server.url}/v1` };
      const run = await runCli(['--provider', 'ai-sdk', '--model', '@ai-sdk/anthropic:claude-sonnet-4-5', '--json', 'run', 'hi'], ws.cwd, { env });
      expect(run.code, run.stderr).to.equal(0);
      const events = jsonEvents(run.stdout);
      expect(events.at(-1)).to.include({ type: 'turn_end', steps: 1 });
      expect(run.stdout).to.include('from the Messages API.');
      expect(server.lastRequest.headers['x-api-key']).to.equal('sk-ant-cli-0123456789');
      expect((server.lastRequest.body as { model: string }).model).to.equal('claude-sonnet-4-5');
    } finally {
      await server.close();
    }
  });

  it('@ai-sdk/openai-compatible: AI_SDK_BASE_URL and AI_SDK_API_KEY go to its factory (an Ollama, vLLM or LM Studio server)', async () => {
    const server = await ChatCompletionsServer.start({ defaultReply: textReply(['compatible ', 'reply']) });
    try {
      const env = { AI_SDK_BASE_URL: server.baseURL, AI_SDK_API_KEY: 'sk-local-0123456789' };
      const run = await runCli(['--provider', 'ai-sdk', '--model', '@ai-sdk/openai-compatible:qwen3:8b', 'run', 'hi'], ws.cwd, { env });
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stdout).to.include('compatible reply');
      expect(server.lastRequest.headers['authorization']).to.equal('Bearer sk-local-0123456789');
      expect((server.lastRequest.body as { model: string }).model).to.equal('qwen3:8b');
    } finally {
      await server.close();
    }
  });

  it("loads the package from the working directory's node_modules", async () => {
    const root = join(ws.cwd, 'node_modules', '@acme', 'ai');
    mkdirSync(root, { recursive: true });
    writeFileSync(join(root, 'package.json'), JSON.stringify({ name: '@acme/ai', type: 'module', exports: { '.': { import: './index.js' } } }));
    writeFileSync(join(root, 'index.js'), ACME);
    const run = await runCli(['--provider', 'ai-sdk', '--model', '@acme/ai:acme-large', 'run', 'hi'], join(ws.cwd, 'src'));
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout).to.include('acme model acme-large');
  });

  it('a package that is not installed: exit 2, saying how to install it', async () => {
    const run = await runCli(['--provider', 'ai-sdk', '--model', '@ai-sdk/mistral-not-installed:mistral-large-latest', 'run', 'hi'], ws.cwd);
    expect(run.code).to.equal(2);
    expect(run.stdout).to.equal('');
    expect(run.stderr).to.equal(
      'kosong: ai-sdk: the AI SDK provider package @ai-sdk/mistral-not-installed is not installed. Install it where you run kosong: npm install @ai-sdk/mistral-not-installed (for a global kosong: npm install -g @ai-sdk/mistral-not-installed)\n',
    );
  });

  it("no key in the package's variable: exit 2 before anything runs, naming the variable", async () => {
    const run = await runWith(['--provider', 'ai-sdk', '--model', '@ai-sdk/anthropic:claude-sonnet-4-5', 'run', 'hi'], ws.cwd, {}, ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN']);
    expect(run.code).to.equal(2);
    expect(run.stderr).to.contain('the ai-sdk provider needs an API key: set the ANTHROPIC_API_KEY environment variable');
  });

  it('a CLI installed without @kosong/provider-ai-sdk: exit 2, saying what to install', async () => {
    // an install as npm makes it: the CLI (bin, bundle, manifest) and its core, no provider package
    const app = realpathSync(mkdtempSync(join(tmpdir(), 'kosong-no-ai-sdk-')));
    try {
      const scope = join(app, 'node_modules', '@kosong');
      mkdirSync(join(scope, 'cli'), { recursive: true });
      for (const part of ['bin', 'dist', 'package.json']) cpSync(fileURLToPath(new URL(`../../${part}`, import.meta.url)), join(scope, 'cli', part), { recursive: true });
      symlinkSync(fileURLToPath(new URL('../../../core/', import.meta.url)), join(scope, 'core'), 'dir');
      const run = await runWith([join(scope, 'cli', 'bin', 'kosong.js'), '--provider', 'ai-sdk', '--model', '@ai-sdk/mistral:mistral-large-latest', 'run', 'hi'], app, {}, [], true);
      expect(run.code).to.equal(2);
      expect(run.stderr).to.equal(
        'kosong: the provider "ai-sdk" is in @kosong/provider-ai-sdk, which is not installed: install it with the AI SDK provider package of your model, e.g. npm install @kosong/provider-ai-sdk @ai-sdk/mistral (for a global kosong: npm install -g)\n',
      );
    } finally {
      rmSync(app, { recursive: true, force: true });
    }
  });

  it('without --model, or with one that names no package: exit 2, saying how to name the model', async () => {
    const [none, bad] = await Promise.all([runCli(['--provider', 'ai-sdk', 'run', 'hi'], ws.cwd), runCli(['--provider', 'ai-sdk', '--model', 'gpt-4.1', 'run', 'hi'], ws.cwd)]);
    expect(none.code).to.equal(2);
    expect(none.stderr).to.equal('kosong: ai-sdk: no model. Name one as <package>:<model-id> with --model (AI_SDK_MODEL), e.g. @ai-sdk/mistral:mistral-large-latest\n');
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.contain('<package>:<model-id>').and.contain('"gpt-4.1"');
  });
});
