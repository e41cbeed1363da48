/**
 * A worker process of the distributed benchmark, as `kosong worker` runs one: an AgentWorker on a
 * kernel with the plan model, and a ToolWorker serving the bench tools, for tenant `bench`. The
 * `wait` tool records when its abort arrived in `{prefix}:aborts`.
 * `node worker-main.js URL PREFIX`. Prints `ready`; SIGTERM closes it.
 *
 * @module
 */
import { Kernel, definePlugin } from '@kosong/core';
import { AgentWorker, RemoteToolset, ToolWorker } from '@kosong/bullmq';
import { PlanProvider } from '@kosong/bullmq/testing';
import { Redis } from 'ioredis';
import { benchToolset } from './echo-toolset.js';

const [url, prefix] = process.argv.slice(2) as [string, string];
const redis = new Redis(url);
const toolWorker = await ToolWorker.start({
  connection: url,
  toolset: benchToolset((at) => void redis.rpush(`${prefix}:aborts`, String(at))),
  name: 'bench',
  tenant: 'bench',
  prefix,
  concurrency: 16,
});
const kernel = new Kernel();
await kernel.use(definePlugin({ name: 'plan', setup: (ctx) => ctx.bindChatProvider('plan', new PlanProvider(), { default: true }) }));
const remote = await RemoteToolset.connect({ connection: url, name: 'bench', tenant: 'bench', prefix });
kernel.tenants.define('bench', { toolset: remote });
const worker = new AgentWorker({ connection: url, kernel, prefix, concurrency: 4 });
await worker.start();
// The handler first: a SIGTERM sent as soon as `ready` is read must close the workers, not kill the process.
process.once('SIGTERM', () => {
  void (async () => {
    await worker.close({ deadlineMs: 1_000 });
    await toolWorker.close({ deadlineMs: 1_000 });
    await remote.close();
    await kernel.dispose();
    redis.disconnect();
    process.exit(0);
  })();
});
process.stdout.write('ready\n');
