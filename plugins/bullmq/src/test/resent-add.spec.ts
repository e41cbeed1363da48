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
});
