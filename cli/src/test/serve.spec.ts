import { createHash } from 'node:crypto';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { expect } from 'chai';

import { killLeftovers, runCli, startCli, type CliProcess } from './cli-harness.js';

/** The `data:` payloads of an SSE body (`[DONE]` kept as the string). */
function sseData(text: string): unknown[] {
  return text
    .split('\n\n')
    .filter((event) => event.startsWith('data: '))
    .map((event) => event.slice('data: '.length))
    .map((data) => (data === '[DONE]' ? data : (JSON.parse(data) as unknown)));
}

const chatBody = (id: string, text: string): string => JSON.stringify({ id, trigger: 'submit-message', messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text }] }] });

/** Starts `kosong serve --port 0 …` in `cwd`; resolves with the process and the URL it printed. */
async function serve(cwd: string, args: readonly string[] = [], env: Readonly<Record<string, string>> = {}): Promise<{ cli: CliProcess; url: string }> {
  const cli = startCli(['serve', '--port', '0', ...args], cwd, env);
  await cli.waitForStdout(/kosong serve: http:\/\/127\.0\.0\.1:\d+\/[^]*Ctrl-C stops/, 30_000);
  const url = /kosong serve: (http:\/\/127\.0\.0\.1:\d+)\//.exec(cli.stdout)![1]!;
  return { cli, url };
}

describe('kosong serve', function () {
  this.timeout(60_000);
  let cwd: string;
  let home: string;

  beforeEach(() => {
    cwd = mkdtempSync(join(tmpdir(), 'kosong-serve-cwd-'));
    home = mkdtempSync(join(tmpdir(), 'kosong-serve-home-'));
    writeFileSync(join(cwd, 'package.json'), '{ "name": "served" }\n');
  });
  afterEach(() => {
    killLeftovers();
    rmSync(cwd, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  });

  it('serves the offline demo with no key: prints the URL, streams a chat as the UI message stream, serves the page, and stops cleanly on SIGINT', async () => {
    const { cli, url } = await serve(cwd, [], { KOSONG_HOME: home });
    expect(cli.stdout).to.include('provider demo');
    const response = await fetch(`${url}/api/chat`, { method: 'POST', body: chatBody('cli-1', 'hello') });
    expect(response.status).to.equal(200);
    expect(response.headers.get('x-vercel-ai-ui-message-stream')).to.equal('v1');
    const chunks = sseData(await response.text()) as { type: string; toolName?: string }[];
    expect(chunks[0]).to.deep.include({ type: 'start' });
    expect(chunks.at(-1)).to.equal('[DONE]');
    expect(chunks.at(-2)).to.deep.include({ type: 'finish' });
    // The demo's tour: the built-in tools of the working directory ran.
    expect(chunks.filter((c) => c.type === 'tool-input-available').map((c) => c.toolName)).to.include.members(['list_directory', 'read_file']);
    expect(chunks.map((c) => c.type)).to.include('tool-output-available');
    const page = await fetch(`${url}/`);
    expect(page.status).to.equal(200);
    expect(page.headers.get('content-type')).to.match(/^text\/html/);
    // The chat is kept under $KOSONG_HOME.
    expect(readdirSync(join(home, 'serve', 'sessions')).length).to.equal(1);
    cli.interrupt();
    const exit = await cli.waitForExit(20_000);
    expect(exit.code).to.equal(0);
    expect(exit.stdout).to.include('stopping');
  });

  it("without keys it serves this machine only: a request for another Host or from another site's page is a 401", async () => {
    const { cli, url } = await serve(cwd, [], { KOSONG_HOME: home });
    const otherSite = await fetch(`${url}/api/chat`, { method: 'POST', headers: { origin: 'http://evil.example' }, body: chatBody('c', 'hi') });
    expect(otherSite.status).to.equal(401);
    // A page of another name that resolves here (DNS rebinding): its Host is not this machine's.
    const rebound = await new Promise<number>((resolve, reject) => {
      const body = chatBody('c', 'hi');
      const req = request(`${url}/api/chat`, { method: 'POST', headers: { host: `evil.example:${new URL(url).port}`, 'content-length': Buffer.byteLength(body) } }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.once('error', reject);
      req.end(body);
    });
    expect(rebound).to.equal(401);
    const sameSite = await fetch(`${url}/api/chat`, { method: 'POST', headers: { origin: url }, body: chatBody('c', 'hi') });
    expect(sameSite.status).to.equal(200);
    await sameSite.text();
    cli.interrupt();
    expect((await cli.waitForExit(20_000)).code).to.equal(0);
  });

  it('with --api-key-file, keys (as their SHA-256) map to tenants: no key or a wrong one is a 401, a tenant never sees another one\'s chat', async () => {
    const sha = (key: string): string => createHash('sha256').update(key).digest('hex');
    const keyFile = join(home, 'keys.txt');
    writeFileSync(keyFile, `# tenant sha256\nacme ${sha('sk-acme')}\nglobex ${sha('sk-globex')}\n`);
    const { cli, url } = await serve(cwd, ['--provider', 'echo', '--api-key-file', keyFile], { KOSONG_HOME: home });
    const post = (key: string | undefined, body: string): Promise<Response> =>
      fetch(`${url}/api/chat`, { method: 'POST', headers: key === undefined ? {} : { authorization: `Bearer ${key}` }, body });
    expect((await post(undefined, chatBody('c', 'text: hi'))).status).to.equal(401);
    expect((await post('sk-wrong', chatBody('c', 'text: hi'))).status).to.equal(401);
    const acme = await post('sk-acme', chatBody('shared-id', 'text: for acme'));
    expect(acme.status).to.equal(200);
    expect(await acme.text()).to.include('for acme');
    const saved = (key: string): Promise<unknown> => fetch(`${url}/api/chat/shared-id/messages`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.json());
    expect(JSON.stringify(await saved('sk-acme'))).to.include('for acme');
    expect(JSON.stringify(await saved('sk-globex'))).to.not.include('for acme');
    cli.interrupt();
    expect((await cli.waitForExit(20_000)).code).to.equal(0);
  });

  it('a bash call waits for an approval from the client: tool-approval-request, then the answer runs it once', async () => {
    const { cli, url } = await serve(cwd, ['--provider', 'echo'], { KOSONG_HOME: home });
    const script = ['tool_call: {"id": "b1", "name": "bash", "arguments": "{\\"command\\": \\"echo ran >> marker.txt\\"}"}', '---', 'text: done'].join('\n');
    const first = sseData(await (await fetch(`${url}/api/chat`, { method: 'POST', body: chatBody('bash-1', script) })).text()) as { type: string; approvalId?: string }[];
    const request = first.find((c) => c.type === 'tool-approval-request');
    expect(request, JSON.stringify(first)).to.not.equal(undefined);
    expect(() => readFileSync(join(cwd, 'marker.txt'))).to.throw(); // nothing ran yet
    const answer = JSON.stringify({
      id: 'bash-1',
      trigger: 'submit-message',
      messageId: 'a1',
      messages: [{ id: 'a1', role: 'assistant', parts: [{ type: 'dynamic-tool', toolName: 'bash', toolCallId: 'b1', state: 'approval-responded', input: {}, approval: { id: request!.approvalId, approved: true } }] }],
    });
    const second = sseData(await (await fetch(`${url}/api/chat`, { method: 'POST', body: answer })).text()) as { type: string }[];
    expect(second.map((c) => c.type)).to.include('tool-output-available');
    expect(readFileSync(join(cwd, 'marker.txt'), 'utf8')).to.equal('ran\n');
    cli.interrupt();
    expect((await cli.waitForExit(20_000)).code).to.equal(0);
  });

  it('--tool-timeout reaches the turns: a bash call that takes longer is stopped and comes back as an error result', async () => {
    const { cli, url } = await serve(cwd, ['--provider', 'echo', '--allow-bash', '--tool-timeout', '300ms'], { KOSONG_HOME: home });
    const script = ['tool_call: {"id": "s1", "name": "bash", "arguments": "{\\"command\\": \\"sleep 20\\"}"}', '---', 'text: after'].join('\n');
    const chunks = sseData(await (await fetch(`${url}/api/chat`, { method: 'POST', body: chatBody('slow-tool', script) })).text()) as { type: string; errorText?: string }[];
    const error = chunks.find((c) => c.type === 'tool-output-error');
    expect(error, JSON.stringify(chunks)).to.not.equal(undefined);
    expect(chunks.at(-2)).to.deep.include({ type: 'finish' });
    cli.interrupt();
    expect((await cli.waitForExit(20_000)).code).to.equal(0);
  });

  it("--config: keys and a tenant's limits; the limit refuses the next turn with a 429 and Retry-After", async () => {
    const sha = createHash('sha256').update('sk-cfg').digest('hex');
    const config = join(home, 'serve.json');
    writeFileSync(config, JSON.stringify({ keys: [{ sha256: sha, tenant: 'acme' }], tenants: { acme: { limits: { requestsPerMinute: 1, onLimit: 'refuse' } } }, systemPrompt: 'Be brief.' }));
    const { cli, url } = await serve(cwd, ['--provider', 'echo', '--config', config], { KOSONG_HOME: home });
    const post = (): Promise<Response> => fetch(`${url}/api/chat`, { method: 'POST', headers: { authorization: 'Bearer sk-cfg' }, body: chatBody('limited', 'text: one') });
    const first = await post();
    expect(first.status).to.equal(200);
    await first.text();
    const second = await post();
    expect(second.status).to.equal(429);
    expect(Number(second.headers.get('retry-after'))).to.be.within(1, 60);
    expect(((await second.json()) as { error: { code: string } }).error.code).to.equal('tenant_limit');
    cli.interrupt();
    expect((await cli.waitForExit(20_000)).code).to.equal(0);
  });

  it('refuses what it cannot honour, before it listens (exit 2): another host without keys, a bad key file, an unknown config key, a port in use', async () => {
    const noKeys = await runCli(['serve', '--port', '0', '--host', '0.0.0.0'], cwd, { env: { KOSONG_HOME: home } });
    expect(noKeys.code).to.equal(2);
    expect(noKeys.stderr).to.include('needs API keys');
    const keyFile = join(home, 'plain.txt');
    writeFileSync(keyFile, 'acme sk-a-plain-key\n');
    const plain = await runCli(['serve', '--port', '0', '--api-key-file', keyFile], cwd, { env: { KOSONG_HOME: home } });
    expect(plain.code).to.equal(2);
    expect(plain.stderr).to.include('line 1');
    const config = join(home, 'config.json');
    writeFileSync(config, JSON.stringify({ prot: 3000 }));
    const bad = await runCli(['serve', '--port', '0', '--config', config], cwd, { env: { KOSONG_HOME: home } });
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.include('unknown key "prot"');
    // a misspelt key inside a tenant or a key entry is refused too, never ignored (a dropped "limits" would serve the tenant unlimited)
    for (const inner of [{ tenants: { acme: { limts: { requestsPerMinute: 1 } } } }, { keys: [{ sha256: 'a'.repeat(64), tenant: 'acme', tenat: 'x' }] }]) {
      writeFileSync(config, JSON.stringify(inner));
      const misspelt = await runCli(['serve', '--port', '0', '--config', config], cwd, { env: { KOSONG_HOME: home } });
      expect(misspelt.code, JSON.stringify(inner)).to.equal(2);
      expect(misspelt.stderr).to.match(/(tenants|keys) must be/);
    }
    // A port in use (here, one this test holds) says so, and how to pick another.
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    try {
      const taken = await runCli(['serve', '--port', String((holder.address() as AddressInfo).port)], cwd, { env: { KOSONG_HOME: home } });
      expect(taken.code).to.equal(2);
      expect(taken.stderr).to.match(/cannot listen on 127\.0\.0\.1:\d+: .*EADDRINUSE.*--port 0 for any free one/);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
    const badPort = await runCli(['serve', '--port', '70000'], cwd, { env: { KOSONG_HOME: home } });
    expect(badPort.code).to.equal(2);
    for (const flags of [['--json'], ['--session', 'x.jsonl'], ['--continue'], ['--resume', 'x'], ['--mcp-config', 'kosong.json']]) {
      const notHonoured = await runCli(['serve', '--port', '0', ...flags], cwd, { env: { KOSONG_HOME: home } });
      expect(notHonoured.code, flags.join(' ')).to.equal(2);
      expect(notHonoured.stderr).to.include(`${flags[0]} is not supported`);
    }
  });

  it('declares @kosong/server as a dependency of the CLI (its workspace version), which the bundle loads from node_modules, not bundled', () => {
    const cliDir = fileURLToPath(new URL('../../', import.meta.url));
    const cliManifest = JSON.parse(readFileSync(join(cliDir, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const serverManifest = JSON.parse(readFileSync(join(cliDir, '../plugins/server/package.json'), 'utf8')) as { version: string };
    expect(cliManifest.dependencies['@kosong/server']).to.equal(serverManifest.version);
    // The bundle keeps the import of the package (loaded by `kosong serve` only), and none of its code.
    const bundled = readdirSync(join(cliDir, 'dist'), { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.js'));
    const code = bundled.map((file) => readFileSync(join(cliDir, 'dist', file), 'utf8')).join('\n');
    expect(code).to.include('"@kosong/server"');
    expect(code).to.not.include('function createChatHandler');
  });
});
