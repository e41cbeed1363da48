/**
 * End to end: the `kosong` CLI, run as a subprocess with `--provider openai-responses`, against a
 * local Responses API server (OPENAI_BASE_URL points at it). The CLI finds the provider by the
 * `providerPlugins` export of `@kosong/provider-openai`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { ResponsesServer, responsesReply } from '@kosong/provider-openai/testing';
import { expect } from 'chai';

import { runCli as runCliWith, type CliExit } from './cli-process.js';

const KEY = 'sk-responses-cli-e2e-0123456789abcdef';

/** Runs the CLI with these variables, and none of the openai SDK's optional ones of this process. */
const runCli = (args: readonly string[], cwd: string, env: Record<string, string>): Promise<CliExit> =>
  runCliWith(args, cwd, env, ['OPENAI_ORG_ID', 'OPENAI_PROJECT_ID', 'OPENAI_LOG', 'OPENAI_WEBHOOK_SECRET']);

describe('kosong --provider openai-responses, end to end against a local Responses API server', function () {
  this.timeout(20_000);
  let server: ResponsesServer;
  let cwd: string;
  let env: Record<string, string>;

  beforeEach(async () => {
    server = await ResponsesServer.start();
    cwd = mkdtempSync(join(tmpdir(), 'kosong-responses-cli-'));
    writeFileSync(join(cwd, 'notes.txt'), 'first line\nsecond line\n');
    env = { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: server.baseURL, OPENAI_MODEL: 'gpt-5.1' };
  });
  afterEach(async () => {
    await server.close();
    rmSync(cwd, { recursive: true, force: true });
  });

  it('`kosong providers` lists every provider: openai, openai-responses, kimi, anthropic, gemini, ai-sdk, echo, demo', async () => {
    const { code, stdout } = await runCli(['providers'], cwd, env);
    expect(code).to.equal(0);
    const names = stdout.trim().split('\n').map((line) => line.split(/\s+/)[0]);
    expect(names).to.have.members(['openai', 'openai-responses', 'kimi', 'anthropic', 'gemini', 'ai-sdk', 'echo', 'demo']);
    expect(stdout).to.match(/^openai-responses\s+OpenAI Responses API/m);
    // the descriptions start in one column, however long a name
    const columns = new Set(stdout.trim().split('\n').map((line) => line.search(/\s\S/) + 1));
    expect(columns.size).to.equal(1);
  });

  it('runs a turn: reasoning and two tool calls streamed from the server run, the results go back with the reasoning, the answer is printed', async () => {
    server.reply(
      responsesReply([
        { type: 'reasoning', summary: [['I should read it and list the folder.']], encrypted: 'enc-cli-1' },
        { type: 'message', text: ['Reading ', 'the notes.'] },
        { type: 'function_call', callId: 'call_read', name: 'read_file', arguments: ['{"path": ', '"notes.txt"}'] },
        { type: 'function_call', callId: 'call_list', name: 'list_directory', arguments: ['{"path": "."}'] },
      ]),
      responsesReply([{ type: 'message', text: ['The notes ', 'have two lines.'] }], { usage: { input_tokens: 300, output_tokens: 9, input_tokens_details: { cached_tokens: 200 } } }),
    );
    const { code, stdout, stderr } = await runCli(['--provider', 'openai-responses', 'run', 'What is in notes.txt?'], cwd, env);
    expect(code, stderr).to.equal(0);
    expect(stdout).to.include('Reading the notes.').and.include('read_file').and.include('list_directory').and.include('The notes have two lines.');
    expect(server.requests).to.have.length(2);
    const first = server.requests[0]!;
    expect(first.path).to.equal('/v1/responses');
    expect(first.headers['authorization']).to.equal(`Bearer ${KEY}`);
    expect(first.body).to.deep.include({ model: 'gpt-5.1', store: false, stream: true });
    const input = (server.requests[1]!.body as { input: Record<string, unknown>[] }).input;
    const types = input.map((item) => item['type'] ?? item['role']);
    expect(types.slice(-6)).to.deep.equal(['reasoning', 'message', 'function_call', 'function_call', 'function_call_output', 'function_call_output']);
    expect(input.find((item) => item['type'] === 'reasoning')).to.include({ encrypted_content: 'enc-cli-1' });
    const outputs = input.filter((item) => item['type'] === 'function_call_output');
    expect(outputs.map((item) => item['call_id'])).to.deep.equal(['call_read', 'call_list']);
    expect(JSON.stringify(outputs[0]!['output'])).to.include('second line');
    expect(JSON.stringify(outputs[1]!['output'])).to.include('notes.txt');
  });

  it('--max-tokens reaches max_output_tokens; --temperature reaches temperature', async () => {
    const { code, stderr } = await runCli(['--provider', 'openai-responses', '--max-tokens', '123', '--temperature', '0.5', 'run', 'hi'], cwd, env);
    expect(code, stderr).to.equal(0);
    expect(server.lastRequest.body).to.deep.include({ max_output_tokens: 123, temperature: 0.5 });
  });

  it('fails a turn with exit code 1 and a clear message, never showing the key', async () => {
    server.reply({ type: 'json', status: 401, body: { error: { message: `Incorrect API key provided: ${KEY}`, type: 'invalid_request_error', code: 'invalid_api_key' } } });
    const { code, stdout, stderr } = await runCli(['--provider', 'openai-responses', 'run', 'hi'], cwd, env);
    expect(code).to.equal(1);
    expect(stdout + stderr).to.include('401').and.include('Incorrect API key provided');
    expect(stdout + stderr).to.not.include(KEY);
  });

  it('without OPENAI_API_KEY, says which variable to set', async () => {
    const { code, stderr } = await runCli(['--provider', 'openai-responses', 'run', 'hi'], cwd, { OPENAI_API_KEY: '', OPENAI_BASE_URL: server.baseURL });
    expect(code).to.equal(2);
    expect(stderr).to.include('OPENAI_API_KEY');
    expect(server.requests).to.have.length(0);
  });
});
