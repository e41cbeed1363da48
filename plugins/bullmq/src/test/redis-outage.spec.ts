import { Kernel, definePlugin, messageFromJSON } from '@kosong/core';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { AgentWorker, RedisUnavailableError, RemoteToolset, SessionKeys, ToolWorker, TurnQueue } from '../index.js';
import { PlanProvider, planInput } from '../testing/plan-provider.js';
import { RedisServer } from '../testing/redis-server.js';
import { closeAll, ProbeToolset, sleep, testPrefix, until } from './support.js';

describe('Redis killed mid-turn, then back (real Redis with AOF, in-process workers)', function () {
  this.timeout(90_000);

  it('the submitter gets a clear error, the session holds whole steps only, and the workers reconnect', async () => {
    const server = await RedisServer.start({ persistent: true });
    const prefix = testPrefix();
    const closers: (() => Promise<void>)[] = [];
    try {
      const probe = new ProbeToolset();
      const toolWorker = await ToolWorker.start({ connection: server.url, toolset: probe, name: 'probe', tenant: 'acme', prefix, lockDurationMs: 3_000 });
      closers.push(() => toolWorker.close({ deadlineMs: 500 }));
      const kernel = new Kernel({ cleanupTimeoutMs: 1_000 });
      await kernel.use(definePlugin({ name: 'plan', setup: (ctx) => ctx.bindChatProvider('plan', new PlanProvider(), { default: true }) }));
      const remote = await RemoteToolset.connect({ connection: server.url, name: 'probe', tenant: 'acme', prefix, abandonAfterMs: 2_000 });
      closers.push(() => remote.close());
      kernel.tenants.define('acme', { toolset: remote });
      const worker = new AgentWorker({ connection: server.url, kernel, prefix, lockDurationMs: 3_000, stalledIntervalMs: 1_000 });
      await worker.start();
      closers.push(async () => {
        await worker.close({ deadlineMs: 1_000 });
        await kernel.dispose();
      });
      const turns = new TurnQueue({ connection: server.url, prefix, unavailableAfterMs: 1_500 });
      closers.push(() => turns.close());

      const turn = await turns.submit({
        tenant: 'acme',
        session: 'outage',
        input: planInput({ label: 'before', steps: [[{ tool: 'echo' }], [{ tool: 'sleep', args: { ms: 60_000 } }]] }),
      });
      await until(() => probe.records.length === 2, 20_000, 'the second step to run its tool');
      await server.kill(); // SIGKILL: a crash, mid-step
      const failedAt = Date.now();
      const error = await turn.result().catch((e: unknown) => e);
      expect(RedisUnavailableError.isInstance(error), String(error)).to.equal(true);
      expect((error as Error).message).to.match(/Redis has been unreachable/);
      expect(Date.now() - failedAt).to.be.below(15_000);

      await sleep(1_000);
      await server.launch(); // back, with its data (AOF, fsync always)
      const admin = new Redis(server.url);
      closers.push(async () => void admin.disconnect());
      const stored = (await admin.lrange(new SessionKeys(prefix, 'acme', 'outage').history, 0, -1)).map((e) => messageFromJSON(JSON.parse(e)));
      // the input and the first whole step; nothing of the step that was running
      expect(stored.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'tool']);
      expect(stored[1]!.toolCalls?.map((c) => c.id)).to.deep.equal(['before-s1-c1']);

      const after = await turns.submit({ tenant: 'acme', session: 'after', input: planInput({ label: 'after', steps: [[{ tool: 'echo' }]] }) });
      const result = await after.result();
      expect(result.steps).to.equal(2);
    } finally {
      try {
        await closeAll(closers);
      } finally {
        await server.stop();
      }
    }
  });
});
