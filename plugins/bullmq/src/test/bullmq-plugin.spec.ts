import { Kernel, definePlugin } from '@kosong/core';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { AgentWorker, bullmqPlugin, ToolWorker } from '../index.js';
import { PlanProvider, planInput } from '../testing/plan-provider.js';
import { RedisServer } from '../testing/redis-server.js';
import { closeAll, ProbeToolset, testPrefix, until } from './support.js';

describe('bullmqPlugin (real Redis)', function () {
  this.timeout(30_000);
  let server: RedisServer;
  const closers: (() => Promise<unknown>)[] = [];

  before(async () => {
    server = await RedisServer.start();
  });
  after(async () => {
    await server.stop();
  });
  afterEach(async () => {
    await closeAll(closers); // what the test did not close, because it failed first
  });

  it('gives tenants remote toolsets and queued turns through kernel.tenants.define, and closes them with the kernel', async () => {
    const prefix = testPrefix();
    const [acmeProbe, globexProbe] = [new ProbeToolset(), new ProbeToolset()];
    const toolWorkers = [
      await ToolWorker.start({ connection: server.url, toolset: acmeProbe, name: 'probe', tenant: 'acme', prefix }),
      await ToolWorker.start({ connection: server.url, toolset: globexProbe, name: 'probe', tenant: 'globex', prefix }),
    ];
    closers.push(() => Promise.all(toolWorkers.map((w) => w.close())));
    const kernel = new Kernel();
    closers.push(() => kernel.dispose());
    const bullmq = bullmqPlugin({ connection: server.url, prefix });
    await kernel.use(definePlugin({ name: 'plan', setup: (ctx) => ctx.bindChatProvider('plan', new PlanProvider(), { default: true }) }), bullmq);
    expect(kernel.plugins()).to.include('bullmq');
    kernel.tenants.define('acme', { toolset: await bullmq.remoteToolset('acme', 'probe') });
    kernel.tenants.define('globex', { toolset: await bullmq.remoteToolset('globex', 'probe') });

    // a local agent of the kernel, with acme's remote tools
    const local = await kernel.agent({ tenant: 'acme', systemPrompt: '' }).run(planInput({ label: 'local', steps: [[{ tool: 'echo', args: { from: 'local' } }]] }));
    expect(local.steps).to.equal(2);
    expect(acmeProbe.records.map((r) => r.call.function.arguments)).to.deep.equal(['{"from":"local"}']);

    // a queued turn for globex, run by an AgentWorker on the same kernel
    const worker = new AgentWorker({ connection: server.url, kernel, prefix });
    closers.push(() => worker.close());
    await worker.start();
    const turn = await bullmq.turns.submit({ tenant: 'globex', session: 's', input: planInput({ label: 'queued', steps: [[{ tool: 'echo', args: { from: 'queued' } }]] }) });
    expect((await turn.result()).steps).to.equal(2);
    expect(globexProbe.records.map((r) => r.call.function.arguments)).to.deep.equal(['{"from":"queued"}']);
    expect(acmeProbe.records).to.have.length(1);
    await worker.close();

    const admin = new Redis(server.url);
    closers.push(async () => admin.disconnect());
    const clients = async (): Promise<number> => ((await admin.client('LIST')) as string).split('\n').filter((l) => /name=kosong-(remote-toolset|tool-events|turn-queue)/.test(l)).length;
    expect(await clients()).to.be.greaterThan(0);
    await kernel.dispose();
    await until(async () => (await clients()) === 0, 5_000, 'the plugin to close its connections');
    expect(() => bullmq.turns).to.throw(/disposed/);
  });
});
