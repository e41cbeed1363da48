/**
 * End to end: `kosong --max-tokens … --temperature …` with the OpenAI and Kimi providers, run as a
 * subprocess against a local Chat Completions server: the flags reach the request body, and what a
 * provider cannot do fails the turn with the typed error's message before any request is sent.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { ChatCompletionsServer } from '@kosong/provider-openai/testing';
import { expect } from 'chai';

import { runCli as runCliWith } from './cli-process.js';

/** Runs the CLI with these variables, and none of the OpenAI organisation settings of this process. */
const runCli = (args: readonly string[], cwd: string, env: Record<string, string>): ReturnType<typeof runCliWith> =>
  runCliWith(args, cwd, env, ['OPENAI_ORG_ID', 'OPENAI_PROJECT_ID']);
describe('kosong --max-tokens / --temperature, end to end against a local Chat Completions server', function () {
  this.timeout(20_000);
  let server: ChatCompletionsServer;
  let cwd: string;

  beforeEach(async () => {
    server = await ChatCompletionsServer.start();
    cwd = mkdtempSync(join(tmpdir(), 'kosong-genopts-cli-'));
  });
  afterEach(async () => {
    await server.close();
    rmSync(cwd, { recursive: true, force: true });
  });

  it('--provider openai sends them as max_completion_tokens and temperature', async () => {
    const env = { OPENAI_API_KEY: 'sk-cli-genopts-0123456789', OPENAI_BASE_URL: server.baseURL, OPENAI_MODEL: 'gpt-test' };
    const { code, stderr } = await runCli(['--provider', 'openai', '--max-tokens', '64', '--temperature', '0.3', 'run', 'hello'], cwd, env);
    expect(code, stderr).to.equal(0);
    expect(server.requests).to.have.length(1);
    expect(server.lastRequest.body).to.include({ model: 'gpt-test', max_completion_tokens: 64, temperature: 0.3 });
  });

  it('without the flags sends neither', async () => {
    const env = { OPENAI_API_KEY: 'sk-cli-genopts-0123456789', OPENAI_BASE_URL: server.baseURL };
    const { code, stderr } = await runCli(['--provider', 'openai', 'run', 'hello'], cwd, env);
    expect(code, stderr).to.equal(0);
    expect(server.lastRequest.body).to.not.have.any.keys('max_completion_tokens', 'max_tokens', 'temperature');
  });

  it('--provider kimi --temperature 1.5 fails the turn (exit 1) with the typed error, sending nothing', async () => {
    const env = { KIMI_API_KEY: 'sk-cli-genopts-0123456789', KIMI_BASE_URL: server.baseURL };
    const { code, stdout, stderr } = await runCli(['--provider', 'kimi', '--temperature', '1.5', 'run', 'hello'], cwd, env);
    expect(code).to.equal(1);
    expect(stdout + stderr).to.include('Provider "kimi" does not support the generation option "temperature"');
    expect(server.requests).to.have.length(0);
  });
});
