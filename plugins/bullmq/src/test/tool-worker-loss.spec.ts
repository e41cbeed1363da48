import { expect } from 'chai';
import { Redis } from 'ioredis';
import { RemoteToolset } from '../index.js';
import { TestProcess } from '../testing/test-process.js';
import { fixture } from './fixtures.js';
import { RedisServer } from '../testing/redis-server.js';
import { call, testPrefix, until } from './support.js';

describe('a tool worker killed mid-call (real processes)', function () {
  this.timeout(60_000);
  let redis: RedisServer;
  let admin: Redis;
  const workers: TestProcess[] = [];
  let tools: RemoteToolset | undefined;

  before(async () => {
    redis = await RedisServer.start();
    admin = new Redis(redis.url);
  });
  after(async () => {
    admin.disconnect();
    await redis.stop();
  });
  afterEach(async () => {
    await tools?.close();
    await Promise.all(workers.splice(0).map((w) => w.stop()));
  });

  async function startWorkers(prefix: string, count: number): Promise<TestProcess[]> {
    const started = await Promise.all(Array.from({ length: count }, () => TestProcess.start(fixture('tool-worker-main.js'), [redis.url, prefix, 'acme', '1000'])));
    workers.push(...started);
    return started;
  }

  /** Runs one call and SIGKILLs whichever worker starts it. */
  async function callAndKillItsWorker(prefix: string, toolName: string): Promise<{ output: string; runs: number }> {
    const procs = await startWorkers(prefix, 2);
    tools = await RemoteToolset.connect({ connection: redis.url, name: 'effects', tenant: 'acme', prefix, timeoutMs: 30_000 });
    const theCall = call('c', toolName, { ms: 60_000 });
    const pending = tools.handle(theCall, { signal: new AbortController().signal, toolCall: theCall, stepId: 'step-loss', index: 0 });
    await until(async () => (await admin.llen(`${prefix}:effect-log`)) === 1, 20_000, 'the call to start');
    const [line] = await admin.lrange(`${prefix}:effect-log`, 0, 0);
    const victim = procs.find((p) => line!.startsWith(`${p.pid} `))!;
    await victim.kill();
    const result = await pending;
    const runs = Number(await admin.get(`${prefix}:effects:step-loss.0`));
    return { output: typeof result.returnValue.output === 'string' && result.returnValue.output ? result.returnValue.output : result.returnValue.message, runs };
  }

  it('a side-effecting tool is not run again: the caller gets "the tool worker was lost"', async () => {
    const { output, runs } = await callAndKillItsWorker(testPrefix(), 'effect');
    expect(output).to.match(/the tool worker was lost/);
    expect(runs, 'the tool ran once').to.equal(1);
  });

  it('a tool marked safe to rerun runs again on another worker', async () => {
    const prefix = testPrefix();
    const { output, runs } = await callAndKillItsWorker(prefix, 'idempotent_effect');
    expect(output).to.match(/^run 2 by \d+$/);
    expect(runs).to.equal(2);
  });
});
