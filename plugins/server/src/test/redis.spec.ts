import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { expect } from 'chai';
import { Redis } from 'ioredis';

import { textPart } from '@kosong/core';

import { redisSessions } from '../redis-sessions.js';
import { redisTurns } from '../redis-turns.js';
import { SLOW_PARTS, startRedisChatServer, type RedisChatServer } from './fixtures/redis-chat-server.js';
import { RedisServer } from '@kosong/bullmq/testing';
import { KEYS, chatBody, expectKnownChunks, markerLines, sseData } from './support.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/redis-chat-server.js', import.meta.url));
const FULL_TEXT = SLOW_PARTS.map((p) => p.text).join('');

/** Process A: the fixture server in a process of its own. */
async function startProcess(redisUrl: string, prefix: string, marker: string, liveTtlMs?: number): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [FIXTURE, redisUrl, prefix, marker, ...(liveTtlMs === undefined ? [] : [String(liveTtlMs)])], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`the server process did not start: ${output}`)), 20_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening (\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.once('exit', (code) => (clearTimeout(timer), reject(new Error(`the server process exited with ${code}: ${output}`))));
  });
  child.removeAllListeners('exit');
  return { child, url: `http://127.0.0.1:${port}` };
}

function send(url: string, method: string, path: string, key: string, body?: string): Promise<Response> {
  return fetch(`${url}${path}`, { method, headers: { authorization: `Bearer ${key}` }, ...(body === undefined ? {} : { body }) });
}

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

describe('@kosong/server on Redis: two server processes, one Redis (sessions, resumable turns, stops, approvals)', function () {
  this.timeout(30_000);
  let redisServer: RedisServer;
  let redis: Redis;
  let folder: string;
  let marker: string;
  let prefix: string;
  let a: { child: ChildProcess; url: string };
  let b: RedisChatServer;

  before(async () => {
    redisServer = await RedisServer.start();
    redis = new Redis(redisServer.url);
  });
  after(async () => {
    await redis.quit();
    await redisServer.stop();
  });

  beforeEach(async () => {
    folder = await mkdtemp(join(tmpdir(), 'kosong-server-redis-spec-'));
    marker = join(folder, 'marker.txt');
    prefix = `t${randomUUID().slice(0, 8)}`;
    [a, b] = await Promise.all([startProcess(redisServer.url, prefix, marker), startRedisChatServer(redisServer.url, prefix, marker)]);
  });
  afterEach(async () => {
    const exited = a.child.exitCode === null && a.child.signalCode === null ? new Promise((resolve) => a.child.once('exit', resolve)) : Promise.resolve();
    a.child.kill('SIGTERM');
    await Promise.all([exited, b.close()]);
    await rm(folder, { recursive: true, force: true });
  });

  it('a turn running on process A is resumed on process B from its first chunk, then live: the same bytes as A sends; then 204 on both', async () => {
    const original = await send(a.url, 'POST', '/api/chat', KEYS.acme, chatBody('across', 'go'));
    expect(original.status).to.equal(200);
    const reader = original.body!.getReader();
    const head = await readEvents(reader, 5);
    const resumed = await send(b.url, 'GET', '/api/chat/across/stream', KEYS.acme);
    expect(resumed.status).to.equal(200);
    expect(resumed.headers.get('x-vercel-ai-ui-message-stream')).to.equal('v1');
    const [resumedText, rest] = await Promise.all([resumed.text(), readEvents(reader, Number.MAX_SAFE_INTEGER)]);
    expect(resumedText).to.equal(head + rest);
    const chunks = sseData(resumedText) as { type: string; delta?: string }[];
    await expectKnownChunks(chunks);
    expect(chunks.filter((c) => c.type === 'text-delta').map((c) => c.delta).join('')).to.equal(FULL_TEXT);
    expect((await send(b.url, 'GET', '/api/chat/across/stream', KEYS.acme)).status).to.equal(204);
    expect((await send(a.url, 'GET', '/api/chat/across/stream', KEYS.acme)).status).to.equal(204);
    // Another tenant guessing the id gets the 204 of a chat that does not exist, on either process.
    expect((await send(b.url, 'GET', '/api/chat/across/stream', KEYS.globex)).status).to.equal(204);
  });

  it("the conversation is in Redis: B's turn goes on from what A's stored; a turn of the chat running on A is a 409 on B, which leaves A's turn resumable", async () => {
    const first = await send(a.url, 'POST', '/api/chat', KEYS.acme, chatBody('shared', 'first'));
    const reader = first.body!.getReader();
    const head = await readEvents(reader, 3);
    const meanwhile = await send(b.url, 'POST', '/api/chat', KEYS.acme, chatBody('shared', 'meanwhile'));
    expect(meanwhile.status).to.equal(409);
    expect(((await meanwhile.json()) as { error: { code: string } }).error.code).to.equal('resume_conflict');
    // The refused turn did not touch A's stream in Redis: a resume on B still reads it whole.
    const resumed = await send(b.url, 'GET', '/api/chat/shared/stream', KEYS.acme);
    expect(resumed.status).to.equal(200);
    const [resumedText, rest] = await Promise.all([resumed.text(), readEvents(reader, Number.MAX_SAFE_INTEGER)]);
    expect(resumedText).to.equal(head + rest);
    const second = await send(b.url, 'POST', '/api/chat', KEYS.acme, chatBody('shared', 'second'));
    expect(second.status).to.equal(200);
    await second.text();
    const sessions = redisSessions(redis, { prefix });
    const context = await sessions.open('acme', 'shared');
    expect(context.history.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'user', 'assistant']);
    expect(context.history[2]!.content).to.deep.equal([textPart('second')]);
    await sessions.close();
  });

  it('a stop that reaches process B stops the turn running on A: its stream ends with abort, nothing of the step is kept', async () => {
    const original = await send(a.url, 'POST', '/api/chat', KEYS.acme, chatBody('stop-across', 'go'));
    const reader = original.body!.getReader();
    const head = await readEvents(reader, 4);
    const stop = await send(b.url, 'POST', '/api/chat/stop-across/stop', KEYS.acme);
    expect(stop.status).to.equal(204);
    const chunks = sseData(head + (await readEvents(reader, Number.MAX_SAFE_INTEGER))) as { type: string }[];
    expect(chunks.at(-2)).to.deep.equal({ type: 'abort', reason: 'Stopped by the client' });
    const sessions = redisSessions(redis, { prefix });
    expect((await sessions.open('acme', 'stop-across')).history.map((m) => m.role)).to.deep.equal(['user']);
    await sessions.close();
    expect((await send(b.url, 'POST', '/api/chat/stop-across/stop', KEYS.acme)).status).to.equal(404);
    expect((await send(b.url, 'POST', '/api/chat/stop-across/stop', KEYS.globex)).status).to.equal(404);
  });

  it('a call deferred on A is approved on B; two answers at once on A and on B: one resumes, the other is refused before anything runs (a 409 with the ResumeConflictError, or a 404 once the step is done), and the tool ran once (5 pairs)', async () => {
    const script = ['tool_call: {"id": "m1", "name": "mark", "arguments": "{}"}', '---', 'text: done'].join('\n');
    const answer = (chatId: string, approvalId: string, approved: boolean): string =>
      JSON.stringify({
        id: chatId,
        trigger: 'submit-message',
        messageId: 'a1',
        messages: [{ id: 'a1', role: 'assistant', parts: [{ type: 'dynamic-tool', toolName: 'mark', toolCallId: 'm1', state: 'approval-responded', input: {}, approval: { id: approvalId, approved } }] }],
      });
    let ran = 0;
    for (let pair = 0; pair < 5; pair++) {
      const chatId = `approve-${pair}`;
      const first = sseData(await (await send(a.url, 'POST', '/api/chat', KEYS.globex, chatBody(chatId, script))).text()) as { type: string; approvalId?: string }[];
      const approvalId = first.find((c) => c.type === 'tool-approval-request')!.approvalId!;
      const secondApproves = pair % 2 === 0; // approve/approve, then approve/deny
      const [onA, onB] = await Promise.all([send(a.url, 'POST', '/api/chat', KEYS.globex, answer(chatId, approvalId, true)), send(b.url, 'POST', '/api/chat', KEYS.globex, answer(chatId, approvalId, secondApproves))]);
      // The loser is refused before anything runs: a 409 while the winner holds the chat, or a 404
      // when the winner had already finished the step before the loser looked (nothing waits then).
      const statuses = [onA.status, onB.status].sort();
      expect([[200, 404], [200, 409]], `pair ${pair}: ${String(statuses)}`).to.deep.include(statuses);
      const [winner, loser] = onA.status === 200 ? [onA, onB] : [onB, onA];
      const error = ((await loser.json()) as { error: { code: string; message: string } }).error;
      if (loser.status === 409) {
        expect(error.code).to.equal('resume_conflict');
        expect(error.message).to.match(/nothing was run/);
      } else expect(error.code).to.equal('no_pending_approval');
      const chunks = sseData(await winner.text()) as { type: string }[];
      expect(chunks.at(-2)).to.deep.include({ type: 'finish' });
      const approved = winner === onA || secondApproves;
      if (approved) ran++;
      expect(chunks.map((c) => c.type)).to.include(approved ? 'tool-output-available' : 'tool-output-denied');
      expect(await markerLines(marker), `pair ${pair}`).to.have.length(ran);
    }
    const sessions = redisSessions(redis, { prefix });
    for (let pair = 0; pair < 5; pair++) {
      const context = await sessions.open('globex', `approve-${pair}`);
      expect(context.pendingStep).to.equal(undefined);
      expect(context.history.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'tool', 'assistant']);
    }
    await sessions.close();
  });

  it('a resume of a turn whose process was killed ends with an error (its live key expired), never hangs nor ends as if whole', async () => {
    // Processes with a short live key (1.5 s) instead of the default 15 s.
    const exited = new Promise((resolve) => a.child.once('exit', resolve));
    a.child.kill('SIGTERM');
    await Promise.all([exited, b.close()]);
    [a, b] = await Promise.all([startProcess(redisServer.url, prefix, marker, 1500), startRedisChatServer(redisServer.url, prefix, marker, 1500)]);
    const original = await send(a.url, 'POST', '/api/chat', KEYS.acme, chatBody('killed', 'go'));
    const reader = original.body!.getReader();
    await readEvents(reader, 4);
    const resumed = await send(b.url, 'GET', '/api/chat/killed/stream', KEYS.acme);
    expect(resumed.status).to.equal(200);
    const resumedReader = resumed.body!.getReader();
    await readEvents(resumedReader, 4);
    a.child.kill('SIGKILL');
    let failure: unknown;
    let text = '';
    try {
      text = await readEvents(resumedReader, Number.MAX_SAFE_INTEGER);
    } catch (error) {
      failure = error;
    }
    expect(failure, `the resumed stream ended without an error after: ${text.slice(-200)}`).to.be.instanceOf(Error);
    expect(text).to.not.include('[DONE]');
    expect((await send(b.url, 'GET', '/api/chat/killed/stream', KEYS.acme)).status).to.equal(204);
  });

  it('redisSessions: a stale copy of a chat writes nothing (ResumeConflictError); a claim is one at a time and reads the chat again', async () => {
    const sessions = redisSessions(redis, { prefix });
    const one = await sessions.open('acme', 'stale');
    const two = await sessions.open('acme', 'stale');
    await one.append({ role: 'user', content: [textPart('first')] });
    let error: unknown;
    try {
      await two.append({ role: 'user', content: [textPart('from a stale copy')] });
    } catch (caught) {
      error = caught;
    }
    expect((error as Error).name).to.equal('ResumeConflictError');
    expect((await sessions.open('acme', 'stale')).history.map((m) => m.content)).to.deep.equal([[textPart('first')]]);
    const release = await two.claim!();
    expect(two.history).to.have.length(1); // read again by the claim
    let second: unknown;
    try {
      await one.claim!();
    } catch (caught) {
      second = caught;
    }
    expect((second as Error).name).to.equal('ResumeConflictError');
    await two.append({ role: 'assistant', content: [textPart('answer')] });
    await release();
    const releaseAgain = await one.claim!();
    expect(one.history).to.have.length(2);
    await releaseAgain();
    await sessions.close();
  });

  it('redisSessions and redisTurns refuse options they do not know (fail closed)', () => {
    expect(() => redisSessions(redis, { prefx: 'x' } as never)).to.throw(TypeError, /unknown option "prefx"/);
    expect(() => redisTurns(redis, { ttl: 1 } as never)).to.throw(TypeError, /unknown option "ttl"/);
    expect(() => redisTurns(redis, { liveTtlMs: 0 })).to.throw(TypeError, /liveTtlMs must be a positive integer/);
    expect(() => redisSessions({} as never)).to.throw(TypeError, /ioredis client/);
  });
});
