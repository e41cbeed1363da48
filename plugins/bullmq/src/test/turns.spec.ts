import { Kernel, definePlugin, messageFromJSON, type Message } from '@kosong/core';
import { Job, Queue } from 'bullmq';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { AgentWorker, CANCELLED_REPLY, RemoteToolset, SessionKeys, ToolWorker, TurnCancelledError, TurnFailedError, TurnQueue, type TurnEvent } from '../index.js';
import { PlanProvider, planInput, type Plan } from '../testing/plan-provider.js';
import { RedisServer } from '../testing/redis-server.js';
import { SUBMIT_SCRIPT } from '../turn-scripts.js';
import { closeAll, ProbeToolset, testPrefix, until } from './support.js';

describe('TurnQueue and AgentWorker (real Redis, in-process workers)', function () {
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
    await closeAll(closers);
  });

  /** A kernel with the plan model and, per tenant, a remote toolset served by a ToolWorker of that tenant. */
  async function fleet(tenants: readonly string[], workers = 1, probeSettleMs = 0): Promise<{ probes: Map<string, ProbeToolset>; agentWorkers: AgentWorker[] }> {
    const probes = new Map<string, ProbeToolset>();
    for (const tenant of tenants) {
      const probe = new ProbeToolset(probeSettleMs);
      probes.set(tenant, probe);
      const toolWorker = await ToolWorker.start({ connection: server.url, toolset: probe, name: 'probe', tenant, prefix });
      closers.push(() => toolWorker.close({ deadlineMs: 500 }));
    }
    const agentWorkers: AgentWorker[] = [];
    for (let i = 0; i < workers; i++) {
      const kernel = new Kernel();
      await kernel.use(definePlugin({ name: 'plan', setup: (ctx) => ctx.bindChatProvider('plan', new PlanProvider(), { default: true }) }));
      for (const tenant of tenants) {
        const remote = await RemoteToolset.connect({ connection: server.url, name: 'probe', tenant, prefix });
        closers.push(() => remote.close());
        kernel.tenants.define(tenant, { toolset: remote });
      }
      const worker = new AgentWorker({ connection: server.url, kernel, prefix, concurrency: 2, lockDurationMs: 3_000, waitTurnMs: 50 });
      await worker.start();
      closers.push(async () => {
        await worker.close({ deadlineMs: 500 });
        await kernel.dispose();
      });
      agentWorkers.push(worker);
    }
    return { probes, agentWorkers };
  }

  function turnQueue(extra: Partial<ConstructorParameters<typeof TurnQueue>[0]> = {}): TurnQueue {
    const queue = new TurnQueue({ connection: server.url, prefix, ...extra });
    closers.push(() => queue.close());
    return queue;
  }

  async function history(tenant: string, session: string): Promise<Message[]> {
    const entries = await admin.lrange(new SessionKeys(prefix, tenant, session).history, 0, -1);
    return entries.map((e) => messageFromJSON(JSON.parse(e)));
  }

  const twoToolSteps = (label: string, ms = 20): Plan => ({
    label,
    steps: [[{ tool: 'sleep', args: { ms } }, { tool: 'echo', args: { label } }], [{ tool: 'echo', args: { n: 2 } }]],
    parts: 2,
  });

  it('runs a turn on a worker: events live and from the start, the result, whole steps in the session', async () => {
    await fleet(['acme']);
    const turns = turnQueue();
    const turn = await turns.submit({ tenant: 'acme', session: 'chat', input: planInput(twoToolSteps('t1')) });
    const live: TurnEvent[] = [];
    for await (const event of turn.events()) live.push(event);
    const result = await turn.result();
    expect(result.steps).to.equal(3);
    expect(result.stopReason).to.equal('no_tool_calls');
    expect(result.usage).to.deep.include({ inputOther: 30, output: 6 });
    expect(result.message.content).to.deep.equal([{ type: 'text', text: 't1 step 3 part 1. t1 step 3 part 2. t1 done.' }]);

    const types = live.map((e) => e.type);
    expect(types[0]).to.equal('turn_start');
    expect(types.at(-1)).to.equal('turn_end');
    expect(types.filter((t) => t === 'step_end')).to.have.length(3);
    expect(types.filter((t) => t === 'tool_call')).to.have.length(3);
    expect(types.filter((t) => t === 'tool_result')).to.have.length(3);
    const stepEnd = live.find((e) => e.type === 'step_end' && e.step === 1);
    expect(stepEnd && stepEnd.type === 'step_end' && stepEnd.toolResults.map((r) => r.toolCallId)).to.deep.equal(['t1-s1-c1', 't1-s1-c2']);

    const again: TurnEvent[] = [];
    for await (const event of turns.handle(turn.turnId, 'acme', 'chat').events()) again.push(event);
    expect(again).to.deep.equal(live);

    expect((await history('acme', 'chat')).map((m) => m.role)).to.deep.equal(['user', 'assistant', 'tool', 'tool', 'assistant', 'tool', 'assistant']);
  });

  it("runs a session's turns one at a time in submission order, across workers", async () => {
    await fleet(['acme'], 2);
    const turns = turnQueue();
    const handles = [];
    for (let i = 0; i < 6; i++) handles.push(await turns.submit({ tenant: 'acme', session: 'ordered', input: planInput(twoToolSteps(`n${i}`, 30)) }));
    const other = await turns.submit({ tenant: 'acme', session: 'other', input: planInput(twoToolSteps('o')) });
    await Promise.all([...handles, other].map((h) => h.result()));
    const users = (await history('acme', 'ordered')).filter((m) => m.role === 'user').map((m) => (JSON.parse((m.content[0] as { text: string }).text.slice(5)) as Plan).label);
    expect(users).to.deep.equal(['n0', 'n1', 'n2', 'n3', 'n4', 'n5']);
    const roles = (await history('acme', 'ordered')).map((m) => m.role).join(' ');
    expect(roles).to.equal(Array(6).fill('user assistant tool tool assistant tool assistant').join(' '));
    expect(await admin.zcard(new SessionKeys(prefix, 'acme', 'ordered').pending)).to.equal(0);
  });

  it('cancel() aborts the running turn and its remote tools; nothing of the unfinished step is kept', async () => {
    const { probes } = await fleet(['acme'], 1, 50);
    const turns = turnQueue();
    const turn = await turns.submit({ tenant: 'acme', session: 'c', input: planInput({ label: 'long', steps: [[{ tool: 'sleep', args: { ms: 60_000 } }]] }) });
    const probe = probes.get('acme')!;
    await until(() => probe.records.length === 1, 20_000, 'the remote tool to start');
    await turn.cancel('the user changed their mind');
    const error = await turn.result().catch((e: unknown) => e);
    expect(TurnCancelledError.isInstance(error)).to.equal(true);
    expect((error as Error).message).to.match(/the user changed their mind/);
    expect(probe.records[0]!.abortedAt, 'the remote tool saw its signal').to.be.a('number');
    expect(probe.records[0]!.finishedAt, 'and settled').to.be.a('number');
    expect((await history('acme', 'c')).map((m) => m.role)).to.deep.equal(['user']);
    const next = await turns.submit({ tenant: 'acme', session: 'c', input: planInput({ label: 'after', steps: [] }) });
    expect((await next.result()).message.content).to.deep.equal([{ type: 'text', text: 'after step 1 part 1. after done.' }]);
  });

  it('cancel() while the model streams, before any tool started: the session gets a reply saying so, and the next turn reads coherently', async () => {
    await fleet(['acme'], 1, 50);
    const turns = turnQueue();
    const turn = await turns.submit({ tenant: 'acme', session: 'cut', input: planInput({ label: 'slow', parts: 40, partDelayMs: 250, steps: [] }) });
    for await (const event of turn.events()) if (event.type === 'part') break;
    await turn.cancel('stop');
    expect(TurnCancelledError.isInstance(await turn.result().catch((e: unknown) => e))).to.equal(true);
    const saved = await history('acme', 'cut');
    expect(saved.map((m) => m.role)).to.deep.equal(['user', 'assistant']);
    expect(saved[1]!.content).to.deep.equal([{ type: 'text', text: CANCELLED_REPLY }]);
    const next = await turns.submit({ tenant: 'acme', session: 'cut', input: planInput({ label: 'after', steps: [] }) });
    await next.result();
    expect((await history('acme', 'cut')).map((m) => m.role)).to.deep.equal(['user', 'assistant', 'user', 'assistant']);
  });

  it('cancel() of a turn still waiting removes it: it never runs', async () => {
    const turns = turnQueue();
    const turn = await turns.submit({ tenant: 'acme', session: 'w', input: planInput(twoToolSteps('never')) });
    await turn.cancel();
    expect(TurnCancelledError.isInstance(await turn.result().catch((e: unknown) => e))).to.equal(true);
    const { probes } = await fleet(['acme']);
    const later = await turns.submit({ tenant: 'acme', session: 'w', input: planInput({ label: 'later', steps: [] }) });
    await later.result();
    expect(probes.get('acme')!.records).to.have.length(0);
    expect((await history('acme', 'w')).map((m) => m.role)).to.deep.equal(['user', 'assistant']);
  });

  it('a turn for a tenant the workers do not know fails with a clear error', async () => {
    await fleet(['acme']);
    const turn = await turnQueue().submit({ tenant: 'initech', session: 's', input: planInput({ label: 'x', steps: [] }) });
    const error = await turn.result().catch((e: unknown) => e);
    expect(TurnFailedError.isInstance(error)).to.equal(true);
    expect((error as TurnFailedError).errorName).to.equal('UnknownTenantError');
  });

  it('a worker shutting down hands its running turn over: another worker goes on from the last whole step', async () => {
    const { probes, agentWorkers } = await fleet(['acme'], 2);
    const turns = turnQueue();
    const turn = await turns.submit({ tenant: 'acme', session: 'handover', input: planInput({ label: 'h', steps: [[{ tool: 'echo' }], [{ tool: 'sleep', args: { ms: 60_000 } }]] }) });
    const events: TurnEvent[] = [];
    const following = (async () => {
      for await (const event of turn.events()) events.push(event);
    })();
    await until(() => probes.get('acme')!.records.length === 2, 20_000, 'the second step to run its tool');
    const first = events.find((e) => e.type === 'turn_start');
    const running = agentWorkers.find((w) => first?.type === 'turn_start' && w.id === first.worker)!;
    await running.close({ deadlineMs: 100 });
    await until(() => events.some((e) => e.type === 'turn_resumed'), 30_000, 'another worker to take the turn over');
    const starts = events.filter((e) => e.type === 'turn_start');
    expect(starts.map((e) => e.type === 'turn_start' && e.attempt)).to.deep.equal([1, 2]);
    expect(starts[1]!.type === 'turn_start' && starts[1]!.worker).to.not.equal(running.id);
    expect(events.find((e) => e.type === 'turn_resumed')).to.deep.include({ fromStep: 2 });
    // The step the closing worker aborted is completed from the call ledger, not redone: its call
    // started and has no recorded outcome, so the model is told it was interrupted (and it never ran twice).
    const result = await turn.result();
    expect(result).to.deep.include({ stopReason: 'no_tool_calls', steps: 3 });
    const stored = await history('acme', 'handover');
    expect(stored.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'tool', 'assistant', 'tool', 'assistant']);
    expect(stored[3]!.toolCalls?.map((c) => c.id)).to.deep.equal(['h-s2-c1']);
    expect(JSON.stringify(stored[4]!.content)).to.match(/Tool call was interrupted/);
    expect(probes.get('acme')!.records.map((r) => r.call.function.name)).to.deep.equal(['echo', 'sleep']);
    await following;
  });

  it('runs a job written as every earlier TurnQueue wrote it (no tenant: null), and fails a job whose data is no turn at once, naming the field', async () => {
    await fleet(['acme']);
    const queue = new Queue('turns', { connection: { host: '127.0.0.1', port: server.port }, prefix });
    closers.push(() => queue.close());
    // By hand, as `TurnQueue` always did: the turn's hash (tenant '' for none), then the job (tenant null).
    const keys = new SessionKeys(prefix, undefined, 'legacy');
    await admin.eval(SUBMIT_SCRIPT, 3, keys.seq, keys.pending, keys.turn('legacy-1'), 'legacy-1', '', 'legacy', Date.now(), 86_400);
    const data = { turnId: 'legacy-1', tenant: null, session: 'legacy', input: [{ role: 'user', content: [{ type: 'text', text: planInput({ label: 'old', steps: [] }) }] }], options: { maxSteps: 3 } };
    await queue.add('turn', data, { jobId: 'legacy-1', attempts: 1, removeOnComplete: { age: 86_400 }, removeOnFail: { age: 86_400 } });
    const result = await turnQueue().handle('legacy-1', undefined, 'legacy').result();
    expect(result).to.deep.include({ stopReason: 'no_tool_calls', steps: 1 });
    expect((await admin.lrange(keys.history, 0, -1)).length).to.equal(2);

    await queue.add('turn', { ...data, turnId: 'bad-1', session: '' }, { jobId: 'bad-1', attempts: 1 });
    let failedReason: string | undefined;
    await until(async () => (failedReason = (await Job.fromId(queue, 'bad-1'))?.failedReason) !== undefined, 10_000, 'the bad job to fail');
    expect(failedReason).to.equal('Turn job bad-1: not a turn job: session is not a non-empty string');
  });

  it('refuses bad submissions', async () => {
    const turns = turnQueue();
    for (const bad of [{ session: '' }, { session: 's', input: '' }, { session: 's', input: [] }, { session: 's', tenant: '' }, { session: 's', options: { maxSteps: 0 } }]) {
      const error = await turns.submit({ input: 'hi', ...bad } as never).catch((e: unknown) => e);
      expect(error, JSON.stringify(bad)).to.be.instanceOf(TypeError);
    }
  });

  it('leaves no job behind', async () => {
    await fleet(['acme']);
    const turns = turnQueue();
    await Promise.all([0, 1, 2].map(async (i) => (await turns.submit({ tenant: 'acme', session: `s${i}`, input: planInput(twoToolSteps(`l${i}`)) })).result()));
    const queue = new Queue('turns', { connection: { host: '127.0.0.1', port: server.port }, prefix });
    closers.push(() => queue.close());
    expect(await queue.getJobCounts('waiting', 'active', 'delayed', 'failed')).to.deep.equal({ waiting: 0, active: 0, delayed: 0, failed: 0 });
  });
});
