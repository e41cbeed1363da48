/**
 * A frozen Redis (SIGSTOP: the process stops, its TCP connections stay open and silent) must not
 * hold commands for ever (issue 20): a write, and a turn's submitter, fail within their window with
 * a `RedisUnavailableError`; once Redis goes on (SIGCONT), every session loads and no call ran
 * twice, counted by the tool's own marker lines.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kernel, definePlugin, textPart, type Message } from '@kosong/core';
import { expect } from 'chai';
import { AgentWorker, RedisContext, RedisUnavailableError, RemoteToolset, ToolWorker, TurnQueue } from '../index.js';
import { PlanProvider, planInput } from '../testing/plan-provider.js';
import { RedisServer } from '../testing/redis-server.js';
import { MarkerToolset, markerCounts } from './fixtures/marker-toolset.js';
import { closeAll, sleep, testPrefix, until } from './support.js';

/** How long a frozen Redis stays frozen in these tests: well past every window given below. */
const FROZEN_MS = 10_000;

/** Whether `pending` settles within `ms`, and how (`'pending'` if not). */
async function settledWithin(pending: Promise<unknown>, ms: number): Promise<{ readonly state: 'fulfilled' | 'rejected' | 'pending'; readonly value?: unknown; readonly afterMs: number }> {
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    pending.then(
      (value) => ({ state: 'fulfilled' as const, value }),
      (value: unknown) => ({ state: 'rejected' as const, value }),
    ),
    new Promise<{ state: 'pending' }>((resolve) => (timer = setTimeout(() => resolve({ state: 'pending' }), ms))),
  ]);
  clearTimeout(timer);
  return { ...outcome, afterMs: Date.now() - started };
}

const userMessage = (text: string): Message => ({ role: 'user', content: [textPart(text)] });

describe('a frozen Redis (SIGSTOP, then SIGCONT; real redis-server)', function () {
  this.timeout(120_000);
  let server: RedisServer;
  let dir: string;
  const closers: (() => Promise<unknown>)[] = [];

  before(async () => {
    server = await RedisServer.start({ persistent: true });
    dir = mkdtempSync(join(tmpdir(), 'kosong-frozen-'));
  });
  afterEach(async () => {
    server.resume();
    await closeAll(closers);
  });
  after(async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a RedisContext write fails with a RedisUnavailableError within reconnectWindowMs, and is in the history at most once after SIGCONT', async () => {
    const prefix = testPrefix();
    const context = new RedisContext({ connection: server.url, tenant: 'acme', session: 'frozen-write', prefix, reconnectWindowMs: 1_000 });
    closers.push(() => context.close());
    await context.restore();
    await context.append(userMessage('before'));
    server.pause();
    const write = await settledWithin(context.append(userMessage('while frozen')), FROZEN_MS - 2_000);
    const frozenFor = write.afterMs;
    expect(write.state, 'the write settled while Redis was still frozen').to.equal('rejected');
    expect(RedisUnavailableError.isInstance(write.value), String(write.value)).to.equal(true);
    expect((write.value as Error).message).to.match(/Redis is unreachable \(Command timed out\)/);
    await sleep(FROZEN_MS - frozenFor);
    server.resume();

    const reader = new RedisContext({ connection: server.url, tenant: 'acme', session: 'frozen-write', prefix });
    closers.push(() => reader.close());
    await reader.restore();
    const texts = reader.history.map((m) => (m.content[0]?.type === 'text' ? m.content[0].text : ''));
    expect(texts[0]).to.equal('before');
    // The write left before Redis froze: applied when it went on (the script is whole), never twice.
    expect(texts.filter((t) => t === 'while frozen').length).to.be.at.most(1);
    expect(texts.length).to.be.within(1, 2);
    // The session takes writes again.
    await reader.append(userMessage('after'));
    const again = new RedisContext({ connection: server.url, tenant: 'acme', session: 'frozen-write', prefix });
    closers.push(() => again.close());
    await again.restore();
    expect(again.history.at(-1)!.content[0]).to.deep.include({ text: 'after' });
  });

  it("a turn in flight fails for its submitter with a RedisUnavailableError while Redis is frozen; after SIGCONT the session loads and no call ran twice", async () => {
    const prefix = testPrefix();
    const file = join(dir, 'markers.log');
    const toolWorker = await ToolWorker.start({ connection: server.url, toolset: new MarkerToolset(file), name: 'marker', tenant: 'acme', prefix, lockDurationMs: 3_000, stalledIntervalMs: 1_000 });
    closers.push(() => toolWorker.close({ deadlineMs: 1_000 }));
    const kernel = new Kernel({ cleanupTimeoutMs: 2_000 });
    await kernel.use(definePlugin({ name: 'plan', setup: (ctx) => ctx.bindChatProvider('plan', new PlanProvider(), { default: true }) }));
    const remote = await RemoteToolset.connect({ connection: server.url, name: 'marker', tenant: 'acme', prefix, reconnectWindowMs: 1_000, timeoutMs: 60_000 });
    closers.push(() => remote.close());
    kernel.tenants.define('acme', { toolset: remote });
    const worker = new AgentWorker({ connection: server.url, kernel, prefix, lockDurationMs: 3_000, stalledIntervalMs: 1_000, waitTurnMs: 50, reconnectWindowMs: 1_000 });
    await worker.start();
    closers.push(async () => {
      await worker.close({ deadlineMs: 2_000 });
      await kernel.dispose();
    });
    const turns = new TurnQueue({ connection: server.url, prefix, unavailableAfterMs: 1_500, reconnectWindowMs: 1_000 });
    closers.push(() => turns.close());

    const turn = await turns.submit({
      tenant: 'acme',
      session: 'frozen-turn',
      input: planInput({ label: 'f', parts: 4, partDelayMs: 100, steps: [[{ tool: 'mark', args: { mark: 'f-1', ms: 1_500 } }], [{ tool: 'mark', args: { mark: 'f-2', ms: 200 } }]] }),
    });
    const result = turn.result();
    result.catch(() => undefined);
    await until(() => markerCounts(file).has('f-1'), 20_000, 'the first call to start');
    server.pause(); // mid-call: the tool runs, its worker's and the agent worker's commands get no answer
    const outcome = await settledWithin(result, FROZEN_MS - 2_000);
    expect(outcome.state, 'the submitter was answered while Redis was still frozen').to.equal('rejected');
    expect(RedisUnavailableError.isInstance(outcome.value), String(outcome.value)).to.equal(true);
    await sleep(FROZEN_MS - outcome.afterMs);
    server.resume();

    // After SIGCONT: the next turn of the session runs once the frozen one has ended, either way.
    const next = await turns.submit({ tenant: 'acme', session: 'frozen-turn', input: planInput({ label: 'g', steps: [[{ tool: 'mark', args: { mark: 'g-1', ms: 10 } }]] }) });
    const done = await next.result();
    expect(done.steps).to.equal(2);
    const reader = new RedisContext({ connection: server.url, tenant: 'acme', session: 'frozen-turn', prefix });
    closers.push(() => reader.close());
    await reader.restore(); // the session loads
    const counts = markerCounts(file);
    for (const [mark, runs] of counts) expect(runs, `${mark} ran at most once`).to.equal(1);
    expect(counts.get('g-1')).to.equal(1);
    // Every call in the history has its result, in order.
    const history = reader.history;
    for (let i = 0; i < history.length; i++) {
      for (const [k, call] of (history[i]!.toolCalls ?? []).entries()) expect(history[i + 1 + k]?.toolCallId, 'whole steps').to.equal(call.id);
    }
  });
});
