/**
 * The Redis ACL users the README gives per role (submitter, tool worker, agent worker) run a turn
 * end to end — a deferred call approved with a signed resumption, a cancellation — and each role is
 * refused the keys of the others: a submitter cannot read tool lists or put a call on a tool queue
 * (where no approval is asked), a tool worker cannot read sessions or turns.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kernel, definePlugin, requireApproval } from '@kosong/core';
import { Queue } from 'bullmq';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { AgentWorker, RemoteToolset, SessionKeys, ToolWorker, TurnCancelledError, TurnQueue } from '../index.js';
import { PlanProvider, planInput } from '../testing/plan-provider.js';
import { RedisServer } from '../testing/redis-server.js';
import { MarkerToolset, markerCounts } from './fixtures/marker-toolset.js';
import { closeAll, testPrefix } from './support.js';

const SECRET = 'an-approval-secret-for-the-acl-test';
/** The commands every role gets (as in the README): all but the dangerous ones, and INFO (ioredis' ready check, BullMQ). */
const COMMANDS = ['+@all', '-@dangerous', '+info'];

describe('Redis ACL users per role, as the README gives them (real Redis)', function () {
  this.timeout(60_000);
  let server: RedisServer;
  let admin: Redis;
  let prefix: string;
  let dir: string;
  const closers: (() => Promise<unknown>)[] = [];

  before(async () => {
    server = await RedisServer.start();
    admin = new Redis(server.url);
  });
  after(async () => {
    admin.disconnect();
    await server.stop();
  });
  beforeEach(() => {
    prefix = testPrefix();
    dir = mkdtempSync(join(tmpdir(), 'kosong-acl-'));
    closers.push(async () => rmSync(dir, { recursive: true, force: true }));
  });
  afterEach(async () => {
    await closeAll(closers);
  });

  /** `ACL SETUSER name on >pw resetkeys ~key… resetchannels &channel… +@all -@dangerous +info`, as in the README. */
  async function user(name: string, keys: readonly string[], channels: readonly string[]): Promise<string> {
    await admin.call('ACL', 'SETUSER', name, 'on', '>pw', 'resetkeys', ...keys.map((k) => `~${k}`), 'resetchannels', ...channels.map((c) => `&${c}`), ...COMMANDS);
    return server.url.replace('redis://', `redis://${name}:pw@`);
  }

  function client(url: string): Redis {
    const redis = new Redis(url, { maxRetriesPerRequest: 1 });
    redis.on('error', () => undefined);
    closers.push(async () => redis.disconnect());
    return redis;
  }

  it('each role does its part of a turn, and nothing of the others', async () => {
    const P = prefix;
    const submitterUrl = await user('submitter', [`${P}:turns:*`, `${P}:s:*`], [`${P}:turncancel`]);
    const toolsUrl = await user('tools-acme-marks', [`${P}:tools.acme.marks:*`, `${P}:toollist:tools.acme.marks`], [`${P}:toolcancel:tools.acme.marks`]);
    const agentsUrl = await user('agents', [`${P}:*`], [`${P}:*`]);

    const markerFile = join(dir, 'marks');
    const tools = await ToolWorker.start({ connection: toolsUrl, toolset: new MarkerToolset(markerFile), name: 'marks', tenant: 'acme', prefix });
    closers.push(() => tools.close({ deadlineMs: 500 }));
    const kernel = new Kernel();
    await kernel.use(definePlugin({ name: 'plan', setup: (ctx) => ctx.bindChatProvider('plan', new PlanProvider(), { default: true }) }));
    const remote = await RemoteToolset.connect({ connection: agentsUrl, name: 'marks', tenant: 'acme', prefix });
    kernel.tenants.define('acme', { toolset: requireApproval(remote, ['mark']) });
    const agents = new AgentWorker({ connection: agentsUrl, kernel, prefix, approvalSecret: SECRET, waitTurnMs: 50 });
    await agents.start();
    closers.push(async () => {
      await agents.close({ deadlineMs: 500 });
      await remote.close();
      await kernel.dispose();
    });

    // The submitter: a turn whose call is deferred, a signed approval, and a cancellation.
    const turns = new TurnQueue({ connection: submitterUrl, prefix, approvalSecret: SECRET });
    closers.push(() => turns.close());
    const deferred = await (await turns.submit({ tenant: 'acme', session: 's', input: planInput({ label: 'a', steps: [[{ tool: 'mark', args: { mark: 'approved', ms: 0 } }]] }) })).result();
    expect(deferred.stopReason).to.equal('approval_required');
    const decisions = { [deferred.pendingApprovals![0]!.toolCall.id]: { type: 'approve' as const } };
    const resumed = await turns.resume({ tenant: 'acme', session: 's', decisions, pendingApprovals: deferred.pendingApprovals! });
    expect((await resumed.result()).stopReason).to.equal('no_tool_calls');
    expect(markerCounts(markerFile).get('approved')).to.equal(1);
    const long = await turns.submit({ tenant: 'acme', session: 'long', input: planInput({ label: 'l', steps: [[{ tool: 'mark_safe', args: { mark: 'long', ms: 60_000 } }]] }) });
    for await (const event of long.events()) if (event.type === 'tool_call') break;
    await long.cancel();
    expect(await long.result().catch((e: unknown) => e)).to.satisfy(TurnCancelledError.isInstance);

    // What each role is refused.
    const submitter = client(submitterUrl);
    const noperm = (promise: Promise<unknown>): Promise<string> => promise.then(() => 'allowed', (e: unknown) => (String((e as Error).message).startsWith('NOPERM') ? 'NOPERM' : String(e)));
    expect(await noperm(submitter.get(`${P}:toollist:tools.acme.marks`)), 'a submitter reads no tool list').to.equal('NOPERM');
    const toolQueue = new Queue('tools.acme.marks', { connection: submitter, prefix });
    toolQueue.on('error', () => undefined);
    closers.push(() => toolQueue.close());
    const call = { tenant: 'acme', stepId: 'x', index: 0, toolCall: { type: 'function', id: 'x', function: { name: 'mark', arguments: '{"mark":"direct"}' } } };
    expect(await noperm(toolQueue.add('mark', call)), 'a submitter puts no call on a tool queue').to.equal('NOPERM');
    expect(await noperm(submitter.publish(`${P}:toolcancel:tools.acme.marks`, '{}')), 'nor cancels tool calls').to.equal('NOPERM');
    const toolWorker = client(toolsUrl);
    expect(await noperm(toolWorker.lrange(new SessionKeys(P, 'acme', 's').history, 0, -1)), 'a tool worker reads no session').to.equal('NOPERM');
    expect(await noperm(toolWorker.hgetall(`${P}:turns:${resumed.turnId}`)), 'nor turn jobs').to.equal('NOPERM');
    expect(await noperm(toolWorker.get(`${P}:toollist:tools.globex.marks`)), "nor another tenant's tools").to.equal('NOPERM');
    expect(markerCounts(markerFile).get('direct') ?? 0).to.equal(0);
  });
});
