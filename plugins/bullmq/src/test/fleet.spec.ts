import { messageFromJSON, type Message } from '@kosong/core';
import { Queue } from 'bullmq';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { SessionKeys, toolQueueName, TurnQueue, type TurnEvent, type TurnHandle } from '../index.js';
import { planInput, type Plan } from '../testing/plan-provider.js';
import { TestProcess } from '../testing/test-process.js';
import { fixture } from './fixtures.js';
import { RedisServer } from '../testing/redis-server.js';
import { testPrefix, until } from './support.js';

const TENANTS = ['t1', 't2', 't3'];
const LOCK_MS = 2_000;

/**
 * The distributed invariants under real failures: 3 worker processes (agent + tool workers), 50
 * turns over 10 sessions of 3 tenants, one worker SIGKILLed mid-turn (while a model streams) and one
 * mid-tool (while a tool runs on it).
 */
describe('a fleet of worker processes, two of them killed (real processes, real Redis)', function () {
  this.timeout(180_000);
  let server: RedisServer;
  let admin: Redis;
  const procs: TestProcess[] = [];
  let turns: TurnQueue | undefined;

  before(async () => {
    server = await RedisServer.start();
    admin = new Redis(server.url);
  });
  after(async () => {
    await turns?.close(); // the test closes it, unless it failed first
    await Promise.all(procs.map((p) => p.kill()));
    admin.disconnect();
    await server.stop();
  });

  it('completes every turn, keeps whole steps in submission order, runs no call twice, and leaves nothing behind', async () => {
    const prefix = testPrefix();
    const startWorker = async (): Promise<TestProcess> => {
      const proc = await TestProcess.start(fixture('agent-worker-main.js'), [server.url, prefix, String(LOCK_MS), ...TENANTS]);
      procs.push(proc);
      return proc;
    };
    await Promise.all([startWorker(), startWorker(), startWorker()]);
    turns = new TurnQueue({ connection: server.url, prefix, unavailableAfterMs: 30_000 });

    const sessions = Array.from({ length: 10 }, (_, i) => ({ tenant: TENANTS[i % 3]!, session: `session-${i}` }));
    const submitted: { handle: TurnHandle; tenant: string; session: string; label: string }[] = [];
    for (let n = 0; n < 50; n++) {
      const { tenant, session } = sessions[n % 10]!;
      const label = `${session}-turn-${Math.floor(n / 10)}`;
      const plan: Plan = {
        label,
        parts: 4,
        partDelayMs: 15,
        steps: [[{ tool: 'effect', args: { ms: 40 + (n % 5) * 60, tenant } }, { tool: 'effect', args: { ms: 20, tenant } }], [{ tool: 'effect', args: { ms: n % 7 === 0 ? 1_500 : 30, tenant } }]],
      };
      submitted.push({ handle: await turns.submit({ tenant, session, input: planInput(plan) }), tenant, session, label });
    }
    const events = new Map<string, TurnEvent[]>();
    const following = submitted.map(async ({ handle }) => {
      const list: TurnEvent[] = [];
      events.set(handle.turnId, list);
      for await (const event of handle.events()) list.push(event);
    });
    const results = Promise.allSettled(submitted.map(({ handle }) => handle.result()));

    // One worker killed while a model streams on it: a turn whose latest event is a part, on that worker.
    const pidOf = (worker: string): number => Number(worker.split(':')[1]);
    const streamingOn = (): number | undefined => {
      for (const list of events.values()) {
        const start = [...list].reverse().find((e) => e.type === 'turn_start');
        if (start?.type === 'turn_start' && list.at(-1)?.type === 'part') return pidOf(start.worker);
      }
      return undefined;
    };
    await until(() => streamingOn() !== undefined, 60_000, 'a turn to stream');
    const midTurn = procs.find((p) => p.pid === streamingOn() && p.alive)!;
    await midTurn.kill();

    // One killed while a tool runs on it: the latest effect started there and not finished yet.
    const logLength = await admin.llen(`${prefix}:effect-log`);
    let midTool: TestProcess | undefined;
    await until(async () => {
      const lines = await admin.lrange(`${prefix}:effect-log`, logLength, -1);
      const busy = lines.filter((l) => l.includes(' start ')).map((l) => Number(l.split(' ')[0]));
      midTool = procs.find((p) => p.alive && busy.includes(p.pid));
      return midTool !== undefined;
    }, 60_000, 'a tool to run on a live worker');
    await midTool!.kill();
    await startWorker(); // a replacement, so the turns keep flowing

    const settled = await results;
    await Promise.all(following);
    const failures = settled.flatMap((s, i) => (s.status === 'rejected' ? [`${submitted[i]!.label}: ${(s.reason as Error).message}`] : []));
    expect(failures, 'every turn completes').to.deep.equal([]);
    const recovered = [...events.values()].filter((list) => list.some((e) => e.type === 'turn_resumed')).length;
    expect(recovered, 'at least the turn killed mid-stream was recovered elsewhere').to.be.greaterThan(0);

    // Each session: whole steps, turns in submission order.
    for (const { tenant, session } of sessions) {
      const entries = await admin.lrange(new SessionKeys(prefix, tenant, session).history, 0, -1);
      const messages = entries.map((e) => messageFromJSON(JSON.parse(e)));
      const labels = submitted.filter((s) => s.session === session).map((s) => s.label);
      expect(userLabels(messages), `${session}: turns in submission order`).to.deep.equal(labels);
      expectWholeSteps(messages, session);
    }

    // No side-effecting call ran twice; no call reached another tenant's worker.
    const effectKeys = await admin.keys(`${prefix}:effects:*`);
    const runs = await Promise.all(effectKeys.map((k) => admin.get(k)));
    expect(effectKeys.length).to.be.greaterThan(100);
    expect(runs.filter((r) => Number(r) > 1), 'calls that ran twice').to.deep.equal([]);
    const log = await admin.lrange(`${prefix}:effect-log`, 0, -1);
    const crossTenant = log.filter((l) => l.includes(' start ')).filter((l) => {
      const [, , , workerTenant, callTenant] = l.split(' ');
      return workerTenant !== callTenant;
    });
    expect(crossTenant).to.deep.equal([]);

    // Nothing left behind: no job waiting, running or delayed; no pending turn; every process stops.
    await turns.close();
    const connection = { host: '127.0.0.1', port: server.port };
    for (const name of ['turns', ...TENANTS.map((t) => toolQueueName(t, 'effects'))]) {
      const queue = new Queue(name, { connection, prefix });
      expect(await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized'), name).to.deep.equal({ waiting: 0, active: 0, delayed: 0, prioritized: 0 });
      await queue.close();
    }
    for (const { tenant, session } of sessions) expect(await admin.zcard(new SessionKeys(prefix, tenant, session).pending)).to.equal(0);
    await Promise.all(procs.filter((p) => p.alive).map((p) => p.stop(10_000)));
    expect(procs.filter((p) => p.alive)).to.deep.equal([]);
    expect(procs.filter((p) => p !== midTurn && p !== midTool).map((p) => p.child.exitCode)).to.deep.equal([0, 0]);
  });
});

function userLabels(messages: readonly Message[]): string[] {
  return messages.filter((m) => m.role === 'user').map((m) => (JSON.parse((m.content[0] as { text: string }).text.slice(5)) as Plan).label);
}

/** Every assistant message with calls is followed by exactly one tool message per call, in call order; each turn ends with an answer. */
function expectWholeSteps(messages: readonly Message[], session: string): void {
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    if (message.role === 'user') {
      expect(messages[i + 1]?.role, `${session}: a turn has steps`).to.equal('assistant');
      continue;
    }
    if (message.role === 'tool') throw new Error(`${session}: a tool message at ${i} without its assistant message`);
    const calls = message.toolCalls ?? [];
    const results = messages.slice(i + 1, i + 1 + calls.length);
    expect(results.map((m) => [m.role, m.toolCallId]), `${session}: step at ${i}`).to.deep.equal(calls.map((c) => ['tool', c.id]));
    if (calls.length === 0) expect([undefined, 'user']).to.include(messages[i + 1]?.role);
    i += calls.length;
  }
}
