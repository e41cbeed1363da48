/**
 * End to end: the `kosong` CLI, run as a subprocess with `--provider anthropic`, against a local
 * Messages API server (ANTHROPIC_BASE_URL points at it). The CLI knows nothing of the Anthropic
 * package: it finds it by its `providerPlugins` export.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { apiError, messageReply, MessagesServer } from '@kosong/provider-anthropic/testing';
import { expect } from 'chai';

import { runCli as runCliWith, type CliExit } from './cli-process.js';

const KEY = 'sk-ant-cli-e2e-0123456789abcdef';

/** Runs the CLI with these variables, and none of the Anthropic SDK's optional ones of this process. */
const runCli = (args: readonly string[], cwd: string, env: Record<string, string>): Promise<CliExit> =>
  runCliWith(args, cwd, env, ['ANTHROPIC_AUTH_TOKEN', 'ANTHROPIC_CUSTOM_HEADERS', 'ANTHROPIC_LOG']);

describe('kosong --provider anthropic, end to end against a local Messages API server', function () {
  this.timeout(20_000);
  let server: MessagesServer;
  let cwd: string;
  let env: Record<string, string>;

  beforeEach(async () => {
    server = await MessagesServer.start();
    cwd = mkdtempSync(join(tmpdir(), 'kosong-anthropic-cli-'));
    writeFileSync(join(cwd, 'notes.txt'), 'first line\nsecond line\n');
    env = { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: server.url, ANTHROPIC_MODEL: 'claude-sonnet-4-6' };
  });
  afterEach(async () => {
    await server.close();
    rmSync(cwd, { recursive: true, force: true });
  });

  it('is listed by `kosong providers`', async () => {
    const { code, stdout } = await runCli(['providers'], cwd, env);
    expect(code).to.equal(0);
    expect(stdout).to.match(/^anthropic\s+Anthropic Messages API \(ANTHROPIC_API_KEY/m);
  });

  it('runs a turn: a tool call streamed from the server runs, its result goes back, the answer is printed', async () => {
    server.reply(
      messageReply([
        { type: 'thinking', thinking: ['I should read it.'], signature: 'sig_cli' },
        { type: 'text', text: ['Reading ', 'the notes.'] },
        { type: 'tool_use', id: 'toolu_read', name: 'read_file', input: ['{"path": ', '"notes.txt"}'] },
      ]),
      messageReply([{ type: 'text', text: ['The notes ', 'have two lines.'] }], { startUsage: { input_tokens: 20, cache_read_input_tokens: 300 } }),
    );
    const { code, stdout, stderr } = await runCli(['--provider', 'anthropic', 'run', 'What is in notes.txt?'], cwd, env);
    expect(code, stderr).to.equal(0);
    expect(stdout).to.include('Reading the notes.').and.include('read_file').and.include('The notes have two lines.');
    expect(server.requests).to.have.length(2);
    const first = server.requests[0]!;
    expect(first.headers['authorization']).to.equal(`Bearer ${KEY}`);
    expect((first.body as { model: string }).model).to.equal('claude-sonnet-4-6');
    const messages = (server.requests[1]!.body as { messages: { role: string; content: Record<string, unknown>[] }[] }).messages;
    expect(messages.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'user']);
    expect(messages[1]!.content[0]).to.deep.equal({ type: 'thinking', thinking: 'I should read it.', signature: 'sig_cli' });
    const result = messages[2]!.content[0]!;
    expect(result).to.include({ type: 'tool_result', tool_use_id: 'toolu_read' });
    expect(JSON.stringify(result['content'])).to.include('second line');
  });

  it('fails a turn with exit code 1 and a clear message, never showing the key', async () => {
    server.reply({ type: 'body', status: 401, body: apiError('authentication_error', `invalid x-api-key ${KEY}`) });
    const { code, stdout, stderr } = await runCli(['--provider', 'anthropic', 'run', 'hi'], cwd, env);
    expect(code).to.equal(1);
    expect(stdout + stderr).to.include('401').and.include('authentication_error');
    expect(stdout + stderr).to.not.include(KEY);
  });

  it('--max-tokens is max_tokens on the wire; --temperature is refused before any request (API version 2026-10-21 has none)', async () => {
    server.reply(messageReply([{ type: 'text', text: ['ok'] }]));
    const capped = await runCli(['--provider', 'anthropic', '--max-tokens', '300', 'run', 'hi'], cwd, env);
    expect(capped.code, capped.stderr).to.equal(0);
    expect((server.lastRequest.body as { max_tokens: number }).max_tokens).to.equal(300);
    const warm = await runCli(['--provider', 'anthropic', '--temperature', '0.5', 'run', 'hi'], cwd, env);
    expect(warm.code).to.equal(1);
    expect(warm.stdout + warm.stderr).to.match(/does not support the generation option "temperature"/).and.include("apiVersion: '2023-06-01'");
    expect(server.requests).to.have.length(1);
  });

  it('without ANTHROPIC_API_KEY, says which variable to set', async () => {
    const { code, stderr } = await runCli(['--provider', 'anthropic', 'run', 'hi'], cwd, { ANTHROPIC_API_KEY: '', ANTHROPIC_BASE_URL: server.url });
    expect(code).to.equal(2);
    expect(stderr).to.include('ANTHROPIC_API_KEY');
    expect(server.requests).to.have.length(0);
  });
});
