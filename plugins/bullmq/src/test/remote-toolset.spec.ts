import { step, textPart, toolCall, toolOk, type CleanupEvent, type ToolResult, type Toolset } from '@kosong/core';
import { MockChatProvider } from '@kosong/provider-echo';
import { defineTool, SimpleToolset } from '@kosong/toolset-simple';
import { Queue } from 'bullmq';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { z } from 'zod';
import { RedisUnavailableError, RemoteToolset, ToolWorker, toolJobId, toolQueueName } from '../index.js';
import { GlobalKeys } from '../keys.js';
import { RedisServer } from '../testing/redis-server.js';
import { call, closeAll, ProbeToolset, sleep, testPrefix, until } from './support.js';

describe('RemoteToolset and ToolWorker (real Redis)', function () {
  this.timeout(30_000);
  let redis: RedisServer;
  let prefix: string;
  const closers: (() => Promise<void>)[] = [];

  before(async () => {
    redis = await RedisServer.start();
  });
  after(async () => {
    await redis.stop();
  });
  beforeEach(() => {
    prefix = testPrefix();
  });
  afterEach(async () => {
    await closeAll(closers);
  });

  async function worker(toolset: Toolset = new ProbeToolset(), extra: Partial<Parameters<typeof ToolWorker.start>[0]> = {}): Promise<ToolWorker> {
    const started = await ToolWorker.start({ connection: redis.url, toolset, name: 'probe', prefix, ...extra });
    closers.push(() => started.close({ deadlineMs: 1_000 }));
    return started;
  }

  async function remote(extra: Partial<Parameters<typeof RemoteToolset.connect>[0]> = {}): Promise<RemoteToolset> {
    // A remote tool that missed its cancellation is given up on well before the test's timeout, so
    // such a bug fails an assertion instead of hanging the test.
    const connected = await RemoteToolset.connect({ connection: redis.url, name: 'probe', prefix, abandonAfterMs: 5_000, ...extra });
    closers.push(() => connected.close());
    return connected;
  }

  async function queueCounts(tenant: string | undefined): Promise<Record<string, number>> {
    const queue = new Queue(toolQueueName(tenant, 'probe'), { connection: { host: '127.0.0.1', port: redis.port }, prefix });
    try {
      return await queue.getJobCounts('waiting', 'active', 'delayed', 'completed', 'failed');
    } finally {
      await queue.close();
    }
  }

  it('serves the tool list the worker published, and runs calls of a step in call order', async () => {
    const probe = new ProbeToolset();
    await worker(probe, { concurrency: 4 });
    const tools = await remote();
    expect(tools.tools.map((t) => t.name)).to.deep.equal(['echo', 'sleep', 'stubborn']);

    const provider = new MockChatProvider([
      textPart('three at once'),
      toolCall('a', 'sleep', '{"ms":120}'),
      toolCall('b', 'echo', '{"x":1}'),
      toolCall('a', 'sleep', '{"ms":10}'), // a duplicate id: results stay aligned by index
    ]);
    const result = await step({ provider, systemPrompt: '', toolset: tools, history: [] });
    const results = await result.toolResults();
    expect(results.map((r) => [r.toolCallId, r.returnValue.output])).to.deep.equal([
      ['a', 'slept 120'],
      ['b', '{"x":1}'],
      ['a', 'slept 10'],
    ]);
    expect(probe.records.map((r) => r.index).sort()).to.deep.equal([0, 1, 2]);
    expect(new Set(probe.records.map((r) => r.stepId))).to.deep.equal(new Set([result.stepId]));
  });

  it('serves any local toolset: a SimpleToolset with a zod tool, its validation errors included', async () => {
    const add = defineTool({ name: 'add', description: 'Adds.', parameters: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => String(a + b) });
    await worker(new SimpleToolset([add]) as never);
    const tools = await remote();
    expect(tools.tools.map((t) => t.name)).to.deep.equal(['add']);
    const signal = new AbortController().signal;
    const ok = await tools.handle(call('c1', 'add', { a: 2, b: 3 }), { signal, toolCall: call('c1', 'add'), stepId: 's-simple', index: 0 });
    const bad = await tools.handle(call('c2', 'add', { a: 'x' }), { signal, toolCall: call('c2', 'add'), stepId: 's-simple', index: 1 });
    expect(ok.returnValue).to.include({ isError: false, output: '5' });
    expect(bad.returnValue.isError).to.equal(true);
    expect(bad.returnValue.message).to.match(/^Error validating JSON arguments/);
  });

  it('enqueueing the same call of the same step twice runs it once; both callers get the result', async () => {
    const probe = new ProbeToolset();
    await worker(probe);
    const [one, two] = [await remote(), await remote()];
    const signal = new AbortController().signal;
    const theCall = call('x', 'sleep', { ms: 100 });
    const context = { signal, toolCall: theCall, stepId: 'step-idem', index: 0 };
    const results = await Promise.all([one.handle(theCall, context), two.handle(theCall, context)]);
    expect(results.map((r) => r.returnValue.output)).to.deep.equal(['slept 100', 'slept 100']);
    expect(probe.records).to.have.length(1);
  });

  it('an abort cancels the running remote tool, and the step waits until it settled', async () => {
    const probe = new ProbeToolset(150); // the tool takes 150 ms to wind down after its abort
    await worker(probe);
    const tools = await remote();
    const controller = new AbortController();
    let cleanup: CleanupEvent | undefined;
    const provider = new MockChatProvider([toolCall('s', 'sleep', '{"ms":60000}')]);
    const result = await step({
      provider,
      systemPrompt: '',
      toolset: tools,
      history: [],
      signal: controller.signal,
      hooks: [{ name: 'probe', hooks: { onCleanup: (e) => void (cleanup = e) } }],
    });
    await until(() => probe.records.length === 1, 10_000, 'the remote call to start');
    const abortedAt = Date.now();
    controller.abort(new Error('user pressed ctrl-c'));
    const error = await result.toolResults().catch((e: unknown) => e);
    const settledAt = Date.now();
    expect(error).to.have.property('message', 'user pressed ctrl-c');
    const record = probe.records[0]!;
    expect(record.abortedAt, 'the remote tool saw its signal').to.be.a('number');
    expect(record.abortedAt! - abortedAt).to.be.below(5_000);
    expect(record.finishedAt, 'the remote tool settled before the step did').to.be.at.most(settledAt);
    expect(cleanup).to.include({ cancelled: true });
    expect(cleanup!.leaked).to.deep.equal([]);
  });

  it('an abort while the call is being enqueued still cancels it (regression: the abort was missed until the timeout)', async () => {
    const probe = new ProbeToolset();
    await worker(probe);
    const tools = await remote({ timeoutMs: 60_000 });
    for (let i = 0; i < 20; i++) {
      const controller = new AbortController();
      const c = call(`r${i}`, 'sleep', { ms: 60_000 });
      const started = Date.now();
      const pending = tools.handle(c, { signal: controller.signal, toolCall: c, stepId: 'step-race', index: i });
      controller.abort(new Error('at once'));
      const result = await pending;
      expect(result.returnValue.message).to.equal('Tool `sleep` was cancelled: at once');
      expect(Date.now() - started).to.be.below(10_000);
    }
    await until(() => probe.records.every((r) => r.abortedAt !== undefined), 5_000, 'every started call to be aborted');
  });

  it('a call cancelled before its worker starts it never starts (regression: the tool got an aborted signal, missed the abort and ran to its end)', async () => {
    const probe = new ProbeToolset();
    await worker(probe);
    const queueName = toolQueueName(undefined, 'probe');
    const jobId = toolJobId('step-early', 0);
    // The cancellation reaches the worker before the job does, as when the caller aborts while the
    // worker is taking the job (the job can no longer be removed; the worker has not registered it yet).
    const admin = new Redis(redis.url);
    closers.push(async () => void admin.disconnect());
    await admin.publish(new GlobalKeys(prefix).toolCancelChannel(queueName), JSON.stringify({ jobId, reason: 'changed my mind' }));
    const queue = new Queue(queueName, { connection: { host: '127.0.0.1', port: redis.port }, prefix });
    closers.push(() => queue.close());
    const job = await queue.add('sleep', { tenant: null, stepId: 'step-early', index: 0, toolCall: call('e', 'sleep', { ms: 3_000 }) }, { jobId });
    await until(async () => (await job.getState()) === 'completed', 20_000, 'the job to complete');
    const finished = (await queue.getJob(jobId))!;
    expect((finished.returnvalue as ToolResult).returnValue.message).to.equal('Tool `sleep` was cancelled: changed my mind');
    expect(probe.records, 'the tool was never started').to.deep.equal([]);
  });

  it('a remote tool that ignores its abort is reported as leaked at the step cleanup deadline', async () => {
    const probe = new ProbeToolset();
    await worker(probe);
    const tools = await remote({ abandonAfterMs: 3_000 });
    const controller = new AbortController();
    let cleanup: CleanupEvent | undefined;
    const result = await step({
      // runs long enough for the abort to reach it through Redis on a loaded machine
      provider: new MockChatProvider([toolCall('s', 'stubborn', '{"ms":4000}')]),
      systemPrompt: '',
      toolset: tools,
      history: [],
      signal: controller.signal,
      cleanupTimeoutMs: 200,
      hooks: [{ name: 'probe', hooks: { onCleanup: (e) => void (cleanup = e) } }],
    });
    await until(() => probe.records.length === 1);
    controller.abort(new Error('stop'));
    await result.toolResults().catch(() => undefined);
    expect(cleanup!.leaked.map((c) => c.id)).to.deep.equal(['s']);
    // The step reports the leak at its cleanup deadline (200 ms), whether or not the abort has
    // reached the worker by then: it does, later, and the tool ignores it.
    await until(() => probe.records[0]!.abortedAt !== undefined, 3_000, 'the abort to reach the remote tool');
    await until(() => tools.inFlight === 0, 10_000, 'the abandoned call to be dropped');
  });

  it('a call still waiting in the queue is removed on abort and never runs', async () => {
    const probe = new ProbeToolset();
    const tools = await remote({ tools: probe.tools }); // no worker yet
    const controller = new AbortController();
    const pending = tools.handle(call('w', 'echo'), { signal: controller.signal, toolCall: call('w', 'echo'), stepId: 'step-waiting', index: 0 });
    await until(async () => (await queueCounts(undefined)).waiting === 1, 5_000, 'the job to be queued');
    controller.abort(new Error('never mind'));
    const result = await pending;
    expect(result.returnValue.isError).to.equal(true);
    expect(result.returnValue.message).to.equal('Tool `echo` was cancelled: never mind');
    expect(await queueCounts(undefined)).to.include({ waiting: 0, active: 0 });
    await worker(probe);
    await sleep(200);
    expect(probe.records).to.have.length(0);
  });

  it('times a call out, cancelling the remote tool', async () => {
    const probe = new ProbeToolset();
    await worker(probe);
    const tools = await remote({ timeoutMs: 300 });
    const signal = new AbortController().signal;
    const result = await tools.handle(call('t', 'sleep', { ms: 60_000 }), { signal, toolCall: call('t', 'sleep'), stepId: 'step-timeout', index: 0 });
    expect(result.returnValue.message).to.equal('Tool `sleep` timed out after 300 ms');
    expect(probe.records[0]!.abortedAt).to.be.a('number');
  });

  it("keeps tenants apart: a tenant's calls reach only its own queue and worker", async () => {
    const [acmeProbe, globexProbe] = [new ProbeToolset(), new ProbeToolset()];
    await worker(acmeProbe, { tenant: 'acme' });
    await worker(globexProbe, { tenant: 'globex' });
    const acme = await remote({ tenant: 'acme' });
    const signal = new AbortController().signal;
    for (let i = 0; i < 5; i++) {
      const c = call(`c${i}`, 'echo', { i });
      await acme.handle(c, { signal, toolCall: c, stepId: 'step-tenants', index: i });
    }
    expect(acmeProbe.records).to.have.length(5);
    expect(globexProbe.records).to.have.length(0);
    expect((await queueCounts('globex')).completed).to.equal(0);
    await expectRejected(RemoteToolset.connect({ connection: redis.url, name: 'probe', tenant: 'initech', prefix }), /No tool worker has published/);
  });

  it('a worker refuses a job of another tenant written to its queue by hand', async () => {
    const probe = new ProbeToolset();
    await worker(probe, { tenant: 'acme' });
    const queue = new Queue(toolQueueName('acme', 'probe'), { connection: { host: '127.0.0.1', port: redis.port }, prefix });
    closers.push(() => queue.close());
    const job = await queue.add('echo', { tenant: 'globex', stepId: 's', index: 0, toolCall: call('c', 'echo') });
    await until(async () => (await job.getState()) === 'completed');
    const finished = (await Queue.prototype.getJob.call(queue, job.id!))!;
    expect((finished.returnvalue as ToolResult).returnValue.message).to.match(/another tenant/);
    expect(probe.records).to.have.length(0);
  });

  it('an enqueue while Redis is unreachable fails the call with a RedisUnavailableError after the reconnect window, not a hang', async () => {
    const lonely = await RedisServer.start();
    const tools = await RemoteToolset.connect({ connection: lonely.url, name: 'probe', prefix, tools: new ProbeToolset().tools, timeoutMs: 2_000, reconnectWindowMs: 1_000 });
    closers.push(() => tools.close());
    await lonely.stop();
    const started = Date.now();
    const outcome = await Promise.resolve(tools.handle(call('c', 'echo'), { signal: new AbortController().signal, toolCall: call('c', 'echo'), stepId: 's', index: 0 })).then(
      () => 'resolved',
      (e: unknown) => e,
    );
    expect(outcome).to.satisfy(RedisUnavailableError.isInstance);
    expect((outcome as Error).message).to.match(/Redis is unreachable/);
    expect(Date.now() - started).to.be.below(5_000);
  });

  it('a worker closing gives up on a tool that ignores its abort: the caller gets "the tool worker shut down" (regression: close waited for ever)', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let abortedAt: number | undefined;
    const hanging: Toolset = {
      tools: [{ name: 'hang', description: 'Runs until the test releases it, whatever happens.', parameters: { type: 'object' } }],
      handle: (c, context) => {
        context.signal.addEventListener('abort', () => void (abortedAt = Date.now()));
        return released.then(() => ({ toolCallId: c.id, returnValue: toolOk({ output: 'released' }) }));
      },
    };
    closers.push(async () => release());
    const hangWorker = await worker(hanging, { name: 'hang' });
    const tools = await remote({ name: 'hang' });
    const c = call('h', 'hang');
    const pending = tools.handle(c, { signal: new AbortController().signal, toolCall: c, stepId: 'step-hang', index: 0 });
    await until(() => hangWorker.running === 1, 10_000, 'the call to start');
    const closingAt = Date.now();
    await hangWorker.close({ deadlineMs: 100, abandonAfterMs: 300 });
    expect(abortedAt, 'the tool was aborted at the deadline').to.be.a('number');
    expect(abortedAt! - closingAt).to.be.at.least(90);
    const result = await pending;
    expect(result.returnValue.isError).to.equal(true);
    expect(result.returnValue.message).to.match(/^Tool `hang` did not finish: the tool worker shut down, and the tool did not stop when it was aborted/);
    expect(hangWorker.running).to.equal(0);
  });

  it('closes cleanly: no connection left open', async () => {
    await worker();
    await remote();
    const admin = new Redis(redis.url);
    try {
      const clients = async (): Promise<number> => ((await admin.client('LIST')) as string).split('\n').filter((l) => l.includes('name=kosong-')).length;
      expect(await clients()).to.be.greaterThan(0);
      await closeAll(closers);
      await until(async () => (await clients()) === 0, 5_000, 'every connection to close');
    } finally {
      admin.disconnect();
    }
  });
});

async function expectRejected(promise: Promise<unknown>, pattern: RegExp): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, 'expected a rejection').to.be.instanceOf(Error);
  expect((error as Error).message).to.match(pattern);
}
