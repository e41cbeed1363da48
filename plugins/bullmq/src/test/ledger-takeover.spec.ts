import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Message } from '@kosong/core';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { RedisContext, TurnQueue, type TurnEvent, type TurnHandle } from '../index.js';
import { planInput } from '../testing/plan-provider.js';
import { RedisServer } from '../testing/redis-server.js';
import { TestProcess } from '../testing/test-process.js';
import { fixture } from './fixtures.js';
import { markerCounts } from './fixtures/marker-toolset.js';
import { closeAll, sleep, testPrefix, until } from './support.js';

const LOCK_MS = 1_000;

/** The text of a message's content, for matching. */
export const textOf = (message: Message | undefined): string => JSON.stringify(message?.content ?? []);

/** The pid of the worker a `turn_start` event names (`host:pid:random`). */
export const pidOfWorker = (worker: string): number => Number(worker.split(':').at(-2));

/**
 * A worker SIGKILLed while a tool call runs: the turn is taken over by another worker process, and
 * the step that was interrupted is completed from the call ledger in Redis. Runs are counted by the
 * tool's own marker line.
 */
describe('a turn taken over after its worker was SIGKILLed mid-call (real processes, real Redis)', function () {
  this.timeout(90_000);
  let server: RedisServer;
  let admin: Redis;
  let dir: string;
  const procs: TestProcess[] = [];
  const closers: (() => Promise<unknown>)[] = [];

  before(async () => {
    server = await RedisServer.start();
    admin = new Redis(server.url);
    dir = mkdtempSync(join(tmpdir(), 'kosong-markers-'));
  });
  after(async () => {
    admin.disconnect();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  afterEach(async () => {
    await closeAll(closers);
    await Promise.all(procs.splice(0).map((p) => p.stop()));
  });

  async function workers(prefix: string, file: string, count: number): Promise<void> {
    procs.push(...(await Promise.all(Array.from({ length: count }, () => TestProcess.start(fixture('ledger-worker-main.js'), [server.url, prefix, String(LOCK_MS), file, 'both'])))));
  }

  /** Submits a one-call turn, and SIGKILLs the process of the agent worker running it once the tool has written its marker. */
  async function killMidCall(prefix: string, file: string, label: string, tool: string): Promise<{ turn: TurnHandle; events: TurnEvent[]; following: Promise<void> }> {
    const turns = new TurnQueue({ connection: server.url, prefix, unavailableAfterMs: 30_000 });
    closers.push(() => turns.close());
    const turn = await turns.submit({ tenant: 'acme', session: label, input: planInput({ label, steps: [[{ tool, args: { mark: `${label}-1`, ms: 4_000 } }]] }) });
    const events: TurnEvent[] = [];
    const following = (async () => {
      for await (const event of turn.events()) events.push(event);
    })();
    await until(() => markerCounts(file).get(`${label}-1`) === 1 && events.some((e) => e.type === 'turn_start'), 30_000, 'the tool to run');
    const start = events.find((e) => e.type === 'turn_start');
    const victim = procs.find((p) => start?.type === 'turn_start' && p.pid === pidOfWorker(start.worker))!;
    await victim.kill();
    return { turn, events, following };
  }

  async function storedHistory(prefix: string, session: string): Promise<readonly Message[]> {
    const context = new RedisContext({ connection: admin, tenant: 'acme', session, prefix });
    await context.restore(); // it loads: whole steps, valid records
    expect(context.openStep, 'no step left open').to.equal(undefined);
    return context.history;
  }

  it("a 'never' tool runs once: the step is completed from the ledger and the model gets the interrupted result", async () => {
    const prefix = testPrefix();
    const file = join(dir, `${prefix}.log`);
    await workers(prefix, file, 2);
    const { turn, events, following } = await killMidCall(prefix, file, 'never', 'mark');
    const result = await turn.result();
    await following;
    expect(result).to.deep.include({ stopReason: 'no_tool_calls', steps: 2 });
    expect(events.some((e) => e.type === 'turn_resumed'), 'taken over').to.equal(true);
    await sleep(500); // nothing runs it late either
    expect(markerCounts(file).get('never-1'), 'runs of the tool (its own marker lines)').to.equal(1);
    const history = await storedHistory(prefix, 'never');
    expect(history.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'tool', 'assistant']);
    expect(textOf(history[2])).to.match(/Tool call was interrupted/);
  });

  it("a 'never' tool that finished after its agent worker was lost: the takeover gives the model the tool's own result, and the tool ran once", async () => {
    const prefix = testPrefix();
    const file = join(dir, `${prefix}.log`);
    // Agents and tools in separate processes: the tool worker lives on when the agent worker is lost.
    // The tool worker first: an agent worker reads the tool list it publishes.
    procs.push(await TestProcess.start(fixture('ledger-worker-main.js'), [server.url, prefix, String(LOCK_MS), file, 'tools']));
    procs.push(...(await Promise.all([1, 2].map(() => TestProcess.start(fixture('ledger-worker-main.js'), [server.url, prefix, String(LOCK_MS), file, 'agent'])))));
    const turns = new TurnQueue({ connection: server.url, prefix, unavailableAfterMs: 30_000 });
    closers.push(() => turns.close());
    const turn = await turns.submit({ tenant: 'acme', session: 'adopted', input: planInput({ label: 'adopted', steps: [[{ tool: 'mark', args: { mark: 'adopted-1', ms: 600 } }]] }) });
    const events: TurnEvent[] = [];
    const following = (async () => {
      for await (const event of turn.events()) events.push(event);
    })();
    await until(() => markerCounts(file).get('adopted-1') === 1 && events.some((e) => e.type === 'turn_start'), 30_000, 'the tool to run');
    const start = events.find((e) => e.type === 'turn_start');
    const victim = procs.find((p) => start?.type === 'turn_start' && p.pid === pidOfWorker(start.worker))!;
    // Frozen while its tool runs (600 ms more), so it never hears the outcome; killed once the turn went on elsewhere.
    process.kill(victim.pid, 'SIGSTOP');
    await until(() => events.some((e) => e.type === 'turn_resumed'), 30_000, 'the takeover');
    await victim.kill();
    const result = await turn.result();
    await following;
    expect(result).to.deep.include({ stopReason: 'no_tool_calls', steps: 2 });
    await sleep(500); // nothing runs it late either
    expect(markerCounts(file).get('adopted-1'), 'runs of the tool (its own marker lines)').to.equal(1);
    const history = await storedHistory(prefix, 'adopted');
    expect(history.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'tool', 'assistant']);
    expect(textOf(history[2]), "the tool's own result").to.include('marked adopted-1');
  });

  it("a 'safe' tool runs again and the turn completes with its result", async () => {
    const prefix = testPrefix();
    const file = join(dir, `${prefix}.log`);
    await workers(prefix, file, 2);
    const { turn, events, following } = await killMidCall(prefix, file, 'safe', 'mark_safe');
    const result = await turn.result();
    await following;
    expect(result).to.deep.include({ stopReason: 'no_tool_calls', steps: 2 });
    expect(events.some((e) => e.type === 'turn_resumed'), 'taken over').to.equal(true);
    expect(markerCounts(file).get('safe-1'), 'runs of the tool').to.be.at.least(2);
    const history = await storedHistory(prefix, 'safe');
    expect(history.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'tool', 'assistant']);
    expect(textOf(history[2])).to.include('marked safe-1');
  });
});
