import { ApprovalPendingError, Kernel, NoPendingApprovalError, definePlugin, messageFromJSON, requireApproval, textPart, toolCall, tokenUsage, type Message, type PendingStep } from '@kosong/core';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { AgentWorker, FencedError, RedisContext, RemoteToolset, SessionKeys, SessionLease, ToolWorker, TurnFailedError, TurnQueue, type TurnEvent } from '../index.js';
import { PlanProvider, planInput, type Plan } from '../testing/plan-provider.js';
import { RedisServer } from '../testing/redis-server.js';
import { ProbeToolset, testPrefix } from './support.js';

const user = (text: string): Message => ({ role: 'user', content: [textPart(text)] });
const assistant: Message = { role: 'assistant', content: [textPart('calling')], toolCalls: [toolCall('c1', 'sleep', '{}'), toolCall('c2', 'echo', '{}')] };
const pendingStep = (overrides: Partial<PendingStep> = {}): PendingStep => ({
  stepId: 'step-1',
  step: 1,
  message: assistant,
  results: [undefined, { toolCallId: 'c2', returnValue: { isError: false, output: 'echoed', message: '', display: [] } }],
  usage: tokenUsage({ inputOther: 10, output: 2 }),
  turnUsage: tokenUsage(),
  messageId: undefined,
  finishReason: 'tool_calls',
  deferredAt: 1,
  expiresAt: undefined,
  ...overrides,
});

describe('approvals on Redis (real Redis)', function () {
  this.timeout(60_000);
  let server: RedisServer;
  let admin: Redis;
  let prefix: string;
  const closers: (() => Promise<void>)[] = [];

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
  });
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  describe('RedisContext', () => {
    const context = (extra: Partial<ConstructorParameters<typeof RedisContext>[0]> = {}): RedisContext =>
      new RedisContext({ connection: admin, tenant: 'acme', session: 's1', prefix, ...extra });

    it('keeps a pending step beside the history, restores it elsewhere, and completes it in one write', async () => {
      const writer = context();
      await writer.append(user('go'));
      await writer.deferStep(pendingStep());
      const elsewhere = context();
      await elsewhere.restore();
      expect(elsewhere.pendingStep).to.deep.equal(pendingStep());
      expect(elsewhere.history).to.deep.equal([user('go')]);
      expect(await elsewhere.append(user('more')).catch((e: unknown) => e)).to.satisfy(ApprovalPendingError.isInstance);

      const messages: Message[] = [assistant, { role: 'tool', content: [textPart('slept')], toolCallId: 'c1' }, { role: 'tool', content: [textPart('echoed')], toolCallId: 'c2' }];
      await elsewhere.completeStep('step-1', ...messages);
      const check = context();
      await check.restore();
      expect(check.pendingStep).to.equal(undefined);
      expect(check.history).to.deep.equal([user('go'), ...messages]);
    });

    it('a copy that missed the deferral cannot append: Redis refuses it while the step waits', async () => {
      const [a, stale] = [context(), context()];
      await a.restore();
      await stale.restore();
      await a.deferStep(pendingStep());
      const error = await stale.append(user('sneaking in')).catch((e: unknown) => e);
      expect((error as Error).message).to.match(/waiting for approval/);
      expect(await admin.llen(new SessionKeys(prefix, 'acme', 's1').history)).to.equal(0);
      expect(await stale.deferStep(pendingStep({ stepId: 'other' })).catch((e: unknown) => e)).to.be.instanceOf(Error);
    });

    it('fences deferring and completing: a zombie writes nothing after a takeover', async () => {
      const keys = new SessionKeys(prefix, 'acme', 's1');
      const first = (await SessionLease.acquire(admin, keys, 60_000, () => undefined))!;
      const zombie = context({ fence: first.token });
      await zombie.deferStep(pendingStep());
      await admin.del(keys.owner);
      const second = (await SessionLease.acquire(admin, keys, 60_000, () => undefined))!;
      expect(await zombie.deferStep(pendingStep({ results: [undefined, undefined] })).catch((e: unknown) => e)).to.satisfy(FencedError.isInstance);
      expect(await zombie.completeStep('step-1', assistant).catch((e: unknown) => e)).to.satisfy(FencedError.isInstance);
      const check = context();
      await check.restore();
      expect(check.pendingStep).to.deep.equal(pendingStep());
      expect(check.history).to.deep.equal([]);
      await first.release();
      await second.release();
    });

    it('refuses to restore a pending step that is not valid, naming it', async () => {
      await admin.hset(new SessionKeys(prefix, 'acme', 's1').meta, 'pendingStep', '{"role":"_pending_step"}', 'pendingStepId', 'x');
      const error = await context().restore().catch((e: unknown) => e);
      expect((error as Error).message).to.match(/waiting for approval in Redis is not valid/);
    });
  });

  describe('queued turns', () => {
    async function toolWorker(): Promise<ProbeToolset> {
      const probe = new ProbeToolset();
      const worker = await ToolWorker.start({ connection: server.url, toolset: probe, name: 'probe', tenant: 'acme', prefix });
      closers.push(() => worker.close({ deadlineMs: 500 }));
      return probe;
    }

    /** An agent worker whose tenant acme has the remote probe tools, `sleep` needing approval (and no approval handler: deferred). */
    async function agentWorker(): Promise<{ close: () => Promise<void> }> {
      const kernel = new Kernel();
      await kernel.use(definePlugin({ name: 'plan', setup: (ctx) => ctx.bindChatProvider('plan', new PlanProvider(), { default: true }) }));
      const remote = await RemoteToolset.connect({ connection: server.url, name: 'probe', tenant: 'acme', prefix });
      kernel.tenants.define('acme', { toolset: requireApproval(remote, ['sleep']) });
      const worker = new AgentWorker({ connection: server.url, kernel, prefix, concurrency: 2, lockDurationMs: 3_000, waitTurnMs: 50 });
      await worker.start();
      let closed = false;
      const close = async (): Promise<void> => {
        if (closed) return;
        closed = true;
        await worker.close({ deadlineMs: 500 });
        await remote.close();
        await kernel.dispose();
      };
      closers.push(close);
      return { close };
    }

    const plan: Plan = { label: 't1', steps: [[{ tool: 'sleep', args: { ms: 1 } }, { tool: 'echo', args: { n: 1 } }], [{ tool: 'echo', args: { n: 2 } }]], parts: 2 };

    async function history(): Promise<Message[]> {
      const entries = await admin.lrange(new SessionKeys(prefix, 'acme', 'chat').history, 0, -1);
      return entries.map((e) => messageFromJSON(JSON.parse(e)));
    }

    it('a turn ends with approval_required; another worker resumes it with the decisions (a resumption queued like a turn)', async () => {
      const probe = await toolWorker();
      const first = await agentWorker();
      const turns = new TurnQueue({ connection: server.url, prefix });
      closers.push(() => turns.close());

      const turn = await turns.submit({ tenant: 'acme', session: 'chat', input: planInput(plan) });
      const events: TurnEvent[] = [];
      for await (const event of turn.events()) events.push(event);
      const deferred = await turn.result();
      expect(deferred).to.deep.include({ stopReason: 'approval_required', steps: 1 });
      expect(deferred.usage).to.deep.include({ inputOther: 10, output: 2 });
      expect(deferred.pendingApprovals!.map((p) => p.toolCall.id)).to.deep.equal(['t1-s1-c1']);
      expect(events.filter((e) => e.type === 'approval_request').map((e) => e.type === 'approval_request' && e.toolCall.id)).to.deep.equal(['t1-s1-c1']);
      expect(probe.records.map((r) => r.call.id)).to.deep.equal(['t1-s1-c2']); // the call that needed no approval ran
      expect((await history()).map((m) => m.role)).to.deep.equal(['user']); // whole steps only

      // A new turn while the step waits is refused; the session is untouched.
      const refused = await turns.submit({ tenant: 'acme', session: 'chat', input: 'something else' });
      const error = await refused.result().catch((e: unknown) => e);
      expect(error).to.satisfy(TurnFailedError.isInstance);
      expect((error as TurnFailedError).errorName).to.equal('ApprovalPendingError');
      expect((await history()).map((m) => m.role)).to.deep.equal(['user']);

      // A decision naming no waiting call is refused before anything is queued, as Agent.resume refuses it.
      const unknown = await turns.resume({ tenant: 'acme', session: 'chat', decisions: { 't1-s1-c2': { type: 'approve' }, nope: { type: 'deny' } } }).catch((e: unknown) => e);
      expect(unknown).to.satisfy(NoPendingApprovalError.isInstance);
      expect((unknown as Error).message).to.match(/no call with id "t1-s1-c2" waits for approval \(waiting: t1-s1-c1\)/);
      expect(await turns.resume({ tenant: 'acme', session: 'chat', decisions: { 't1-s1-c1': 'yes' as never } }).catch((e: unknown) => e)).to.be.instanceOf(TypeError);
      expect(await admin.zcard(new SessionKeys(prefix, 'acme', 'chat').pending), 'nothing queued').to.equal(0);

      // The first worker goes away; a new one takes the resumption.
      await first.close();
      await agentWorker();
      const resumption = await turns.resume({ tenant: 'acme', session: 'chat', decisions: { 't1-s1-c1': { type: 'approve' } } });
      const resumedEvents: TurnEvent[] = [];
      for await (const event of resumption.events()) resumedEvents.push(event);
      const done = await resumption.result();
      expect(done).to.deep.include({ stopReason: 'no_tool_calls', steps: 3 });
      expect(done.usage).to.deep.include({ inputOther: 30, output: 6 }); // like the same turn without approvals
      expect(resumedEvents.filter((e) => e.type === 'step_end').map((e) => e.type === 'step_end' && e.step)).to.deep.equal([1, 2, 3]);
      expect(resumedEvents.find((e) => e.type === 'approval_decision')).to.deep.include({ step: 1, decision: { type: 'approve' } });
      expect(probe.records.map((r) => r.call.id)).to.deep.equal(['t1-s1-c2', 't1-s1-c1', 't1-s2-c1']); // each call once
      expect((await history()).map((m) => m.role)).to.deep.equal(['user', 'assistant', 'tool', 'tool', 'assistant', 'tool', 'assistant']);
      expect((await history())[2]!.toolCallId).to.equal('t1-s1-c1'); // call order
    });

    it('a resumption with nothing waiting fails with NoPendingApprovalError; bad decisions are refused before anything is queued', async () => {
      await toolWorker();
      await agentWorker();
      const turns = new TurnQueue({ connection: server.url, prefix });
      closers.push(() => turns.close());
      // Nothing waits and no turn of the session is queued: refused before anything is queued, as Agent.resume refuses it.
      const error = await turns.resume({ tenant: 'acme', session: 'empty', decisions: {} }).catch((e: unknown) => e);
      expect(error).to.satisfy(NoPendingApprovalError.isInstance);
      expect(await admin.zcard(new SessionKeys(prefix, 'acme', 'empty').pending), 'nothing queued').to.equal(0);
      expect(await turns.resume({ session: 'x', decisions: { a: { type: 'yes' } as never } }).catch((e: unknown) => e)).to.be.instanceOf(TypeError);
    });
  });
});
