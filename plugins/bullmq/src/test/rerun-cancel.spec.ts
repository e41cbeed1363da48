/**
 * A cancellation is for one run of a call. Cancellations go to every tool worker of the queue, and a
 * worker that is not running the job remembers it for a while (the job may be about to start there);
 * a call run again with the same idempotency key (its step done again after a takeover) has the same
 * job id, and must not be cancelled by what was sent for its earlier run.
 */
import { expect } from 'chai';
import { RemoteToolset, ToolWorker } from '../index.js';
import { RedisServer } from '../testing/redis-server.js';
import { ProbeToolset, call, closeAll, testPrefix, until } from './support.js';

describe('cancellations reach only the run they were sent for (real Redis)', function () {
  this.timeout(60_000);
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
    await closeAll(closers);
  });

  it('a call run again with the same key, on a worker that heard the cancellation of its earlier run, runs', async () => {
    const [probeA, probeB] = [new ProbeToolset(), new ProbeToolset()];
    const start = async (probe: ProbeToolset): Promise<ToolWorker> => {
      const worker = await ToolWorker.start({ connection: server.url, toolset: probe, name: 'probe', tenant: 'acme', prefix, concurrency: 1 });
      closers.push(() => worker.close({ deadlineMs: 500 }));
      return worker;
    };
    const a = await start(probeA);
    const remote = await RemoteToolset.connect({ connection: server.url, name: 'probe', tenant: 'acme', prefix });
    closers.push(() => remote.close());
    const sleepCall = call('c1', 'sleep', { ms: 60_000 });
    const context = (signal: AbortSignal) => ({ signal, toolCall: sleepCall, stepId: 'step-1', index: 0, idempotencyKey: 'acme/s/turn-1/1/0' });

    // The first run starts on A; B comes up, then the first run is cancelled: B hears it too.
    const first = new AbortController();
    const firstResult = remote.handle(sleepCall, context(first.signal));
    await until(() => probeA.records.length === 1, 10_000, 'the first run to start on A');
    await start(probeB);
    first.abort(new Error('the step was aborted'));
    expect((await firstResult).returnValue.message).to.match(/cancelled/);
    await a.close({ deadlineMs: 500 });

    // The call runs again (its step done again), with the same key: only B is left to run it.
    const again = call('c1', 'sleep', { ms: 10 });
    const result = await remote.handle(again, { ...context(new AbortController().signal), toolCall: again });
    expect(result.returnValue, 'not cancelled by the earlier run\'s cancellation').to.deep.include({ isError: false, output: 'slept 10' });
    expect(probeB.records.map((r) => r.abortedAt), 'B ran it, and did not abort it').to.deep.equal([undefined]);
  });
});
