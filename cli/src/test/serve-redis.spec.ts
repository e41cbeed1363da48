import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { RedisServer } from '@kosong/bullmq/testing';
import { expect } from 'chai';

import { killLeftovers, startCli, type CliProcess } from './cli-harness.js';

const chatBody = (id: string, text: string): string => JSON.stringify({ id, trigger: 'submit-message', messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text }] }] });

/** Reads a body until `count` SSE events arrived. */
async function readEvents(reader: ReadableStreamDefaultReader<Uint8Array>, count: number): Promise<string> {
  const decoder = new TextDecoder();
  let text = '';
  while (text.split('\n\n').length - 1 < count) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  return text;
}

describe('kosong serve --redis: two processes on one Redis', function () {
  this.timeout(90_000);
  let redis: RedisServer;
  let cwd: string;
  let home: string;

  before(async () => {
    redis = await RedisServer.start();
  });
  after(async () => {
    await redis.stop();
  });
  beforeEach(() => {
    cwd = mkdtempSync(join(tmpdir(), 'kosong-serve-redis-cwd-'));
    home = mkdtempSync(join(tmpdir(), 'kosong-serve-redis-home-'));
    writeFileSync(join(cwd, 'package.json'), '{ "name": "served" }\n');
  });
  afterEach(() => {
    killLeftovers();
    rmSync(cwd, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  });

  async function serve(): Promise<{ cli: CliProcess; url: string }> {
    const cli = startCli(['serve', '--port', '0', '--redis', redis.url], cwd, { KOSONG_HOME: home });
    await cli.waitForStdout(/Ctrl-C stops/, 30_000);
    expect(cli.stdout).to.include(`chats in Redis ${redis.url}`);
    return { cli, url: /kosong serve: (http:\/\/127\.0\.0\.1:\d+)\//.exec(cli.stdout)![1]! };
  }

  it("a turn running on one is resumed on the other from its first chunk; the other goes on with the chat's history", async () => {
    const [a, b] = await Promise.all([serve(), serve()]);
    const original = await fetch(`${a.url}/api/chat`, { method: 'POST', body: chatBody('tour-1', 'hello') });
    expect(original.status).to.equal(200);
    const reader = original.body!.getReader();
    const head = await readEvents(reader, 6);
    const resumed = await fetch(`${b.url}/api/chat/tour-1/stream`);
    expect(resumed.status).to.equal(200);
    const [resumedText, rest] = await Promise.all([resumed.text(), readEvents(reader, Number.MAX_SAFE_INTEGER)]);
    expect(resumedText).to.equal(head + rest);
    expect(resumedText).to.include('"type":"finish"');

    const next = await fetch(`${b.url}/api/chat`, { method: 'POST', body: chatBody('tour-1', 'and now?') });
    expect(next.status).to.equal(200);
    await next.text();
    const saved = (await (await fetch(`${a.url}/api/chat/tour-1/messages`)).json()) as { messages: { role: string }[] };
    expect(saved.messages.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'user', 'assistant']);

    for (const { cli } of [a, b]) cli.interrupt();
    for (const { cli } of [a, b]) expect((await cli.waitForExit(20_000)).code).to.equal(0);
  });
});
