/**
 * After a Redis restart, ioredis sends again the commands whose reply it never got — among them the
 * add of a call's tool job, whose first send Redis had applied. The second add answers "duplicated".
 * That job is the call's own (same run id), whatever became of it: if its run was interrupted (the
 * tool worker died), the call is interrupted, and the job is never enqueued again — a `'never'`
 * tool would run twice. The restart itself is not needed to show it: the add is sent twice here.
 */
import { Job, Queue, Worker } from 'bullmq';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import sinon from 'sinon';
import { RemoteToolset } from '../index.js';
import { toolWorkerLost, type ToolJobData, type ToolJobOutcome } from '../tool-job.js';
import { RedisServer } from '../testing/redis-server.js';
import { call, closeAll, sleep, testPrefix, until } from './support.js';

describe('a tool job added twice (its add resent after a reconnection, real Redis)', function () {
  this.timeout(30_000);
  let server: RedisServer;
  let prefix: string;
  const closers: (() => Promise<unknown>)[] = [];

  before(async () => {
    server = await RedisServer.start();
  });
  after(async () => {
    await server.stop();
  });
  beforeEach(() => {
    prefix = testPrefix();
  });
  afterEach(async () => {
    sinon.restore();
    await closeAll(closers);
  });

  it("is the call's own job: its interrupted run is the call's outcome, and the tool is not run again", async () => {
    const remote = await RemoteToolset.connect({
      connection: server.url,
      name: 'pay',
      prefix,
      tools: [{ name: 'pay', description: 'Pays.', parameters: { type: 'object' } }],
    });
    closers.push(() => remote.close());
    // A tool worker whose runs are all cut short (its process dies mid-run: BullMQ's stalled-job check hands back "lost").
    const runs: string[] = [];
    const workerRedis = new Redis(server.url, { maxRetriesPerRequest: null });
    const worker = new Worker<ToolJobData, ToolJobOutcome>(
      remote.queueName,
      (job) => {
        runs.push(job.data.run ?? '');
        return Promise.resolve({ toolCallId: job.data.toolCall.id, returnValue: toolWorkerLost('pay'), interrupted: true, ...(job.data.run === undefined ? {} : { run: job.data.run }) });
      },
      { connection: workerRedis, prefix },
    );
    closers.push(async () => {
      await worker.close();
      workerRedis.disconnect();
    });

    // The add goes through, its run ends interrupted, then the same add arrives again.
    const add = Queue.prototype.add;
    sinon.stub(Queue.prototype, 'add').callsFake(async function (this: Queue, ...args: Parameters<Queue['add']>) {
      const job = await add.apply(this, args);
      await until(async () => (await Job.fromId(this, job.id!))?.finishedOn !== undefined, 10_000, 'the first run to end');
      return add.apply(this, args);
    });

    const paying = call('c1', 'pay');
    const result = await remote.handle(paying, { signal: new AbortController().signal, toolCall: paying, stepId: 'step-1', index: 0, idempotencyKey: 'acme/s/turn-1/1/0' });
    expect(result.returnValue.message).to.match(/the tool worker was lost/);
    await sleep(1_000); // a job enqueued again would have run by now
    expect(runs, 'the tool ran once').to.have.length(1);
    const queueRedis = new Redis(server.url);
    const queue = new Queue(remote.queueName, { connection: queueRedis, prefix });
    closers.push(async () => {
      await queue.close();
      queueRedis.disconnect();
    });
    expect(await queue.getJobCounts('waiting', 'active', 'delayed')).to.deep.equal({ waiting: 0, active: 0, delayed: 0 });
  });

  /**
   * The add went through and was sent again (duplicated); by the time the toolset looks the job up,
   * it is gone — removed by the recovery of the turn on another worker, as this toolset's step was
   * being abandoned. Whose job it was, and whether it ran, is unknown: a call of a side-effecting
   * tool is not enqueued again (it would run for a step nobody records); a safe one is.
   */
  for (const [policy, expected] of [
    ['never', { runs: 0, message: /its job was removed from the queue before its outcome was known/ }],
    ['safe', { runs: 1, message: undefined }],
  ] as const) {
    it(`a job gone when its duplicated add is looked at: a '${policy}' call ${policy === 'never' ? 'is not run again' : 'runs again'}`, async () => {
      const remote = await RemoteToolset.connect({
        connection: server.url,
        name: 'pay',
        prefix,
        tools: [{ name: 'pay', description: 'Pays.', parameters: { type: 'object' } }],
        replay: { pay: policy },
      });
      closers.push(() => remote.close());
      // Once each: the first add is sent again, and the first look-up finds the job removed.
      const add = Queue.prototype.add;
      let resent = false;
      sinon.stub(Queue.prototype, 'add').callsFake(async function (this: Queue, ...args: Parameters<Queue['add']>) {
        const job = await add.apply(this, args);
        if (resent) return job;
        resent = true;
        return add.apply(this, args); // sent again: "duplicated"
      });
      const fromId = Job.fromId.bind(Job);
      let removed = false;
      let markRemoved!: () => void;
      const removal = new Promise<void>((resolve) => (markRemoved = resolve));
      sinon.stub(Job, 'fromId').callsFake(async (queue: Parameters<typeof Job.fromId>[0], jobId: string) => {
        if (!removed) {
          removed = true;
          await (queue as Queue).remove(jobId); // the other worker's recovery removed the waiting job meanwhile
          markRemoved();
        }
        return fromId(queue, jobId);
      });
      const paying = call('c1', 'pay');
      const outcome = remote.handle(paying, { signal: new AbortController().signal, toolCall: paying, stepId: 'step-1', index: 0, idempotencyKey: 'acme/s/turn-1/1/0' });
      // A worker comes up only once the job is gone (one up earlier could take the job first: CI saw it run): whatever is in the queue then runs.
      await removal;
      const runs: string[] = [];
      const workerRedis = new Redis(server.url, { maxRetriesPerRequest: null });
      const worker = new Worker<ToolJobData, ToolJobOutcome>(
        remote.queueName,
        (job) => {
          runs.push(job.data.run ?? '');
          return Promise.resolve({ toolCallId: job.data.toolCall.id, returnValue: { isError: false, output: 'paid', message: '', display: [] }, ...(job.data.run === undefined ? {} : { run: job.data.run }) });
        },
        { connection: workerRedis, prefix },
      );
      closers.push(async () => {
        await worker.close();
        workerRedis.disconnect();
      });
      const result = await outcome;
      await sleep(500); // a job enqueued again would have run by now
      expect(runs, 'runs').to.have.length(expected.runs);
      if (expected.message) expect(result.returnValue.message).to.match(expected.message);
      else expect(result.returnValue.output).to.equal('paid');
    });
  }
});
