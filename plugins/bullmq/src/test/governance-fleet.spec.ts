import { createServer, type Server } from 'node:http';
import { TenantLimitError } from '@kosong/core';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { TurnFailedError, TurnQueue, type TurnEvent, type TurnHandle } from '../index.js';
import { planInput, type Plan } from '../testing/plan-provider.js';
import { RedisServer } from '../testing/redis-server.js';
import { TestProcess } from '../testing/test-process.js';
import { fixture } from './fixtures.js';
import { sleep, testPrefix, until } from './support.js';

/** What the test's server saw of one kind of request (`generate`, `tool`) of one tenant. */
interface Seen {
  active: number;
  max: number;
  readonly arrivals: number[];
  readonly pids: Set<string>;
}

/**
 * The "provider" of the workers: every model request and every tool call of their tenants is a
 * request to it, held `holdMs[kind]`; it counts them per tenant as they arrive and while they run.
 */
class CountingServer {
  readonly holdMs: Record<string, number> = { generate: 100, tool: 100 };
  readonly #seen = new Map<string, Seen>();
  readonly #server: Server;
  url = '';

  constructor() {
    this.#server = createServer((request, response) => {
      const url = new URL(request.url ?? '/', 'http://127.0.0.1');
      const seen = this.seen(url.pathname.slice(1), url.searchParams.get('tenant') ?? '?');
      seen.active++;
      seen.max = Math.max(seen.max, seen.active);
      seen.arrivals.push(Date.now());
      seen.pids.add(url.searchParams.get('pid') ?? '?');
      request.resume();
      setTimeout(() => {
        seen.active--;
        response.end('done');
      }, this.holdMs[url.pathname.slice(1)] ?? 0);
    });
  }

  seen(kind: string, tenant: string): Seen {
    const key = `${kind}:${tenant}`;
    let seen = this.#seen.get(key);
    if (seen === undefined) this.#seen.set(key, (seen = { active: 0, max: 0, arrivals: [], pids: new Set() }));
    return seen;
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    const address = this.#server.address();
    this.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  }

  close(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

const LIMITS = {
  capped: { maxConcurrentSteps: 2, maxConcurrentToolCalls: 1 },
  paced: { requestsPerMinute: 12, onLimit: 'refuse' },
};

/**
 * Tenant limits across 3 worker processes on one Redis (RedisGovernance in each worker's kernel):
 * the combined concurrency and rate of a tenant, counted at the local server its requests and tool
 * calls go to, stay within its limits; a limit changed on every worker under load holds from the
 * next admission on.
 */
describe('tenant limits across 3 worker processes (real processes, real Redis, a local provider server)', function () {
  this.timeout(180_000);
  let redis: RedisServer;
  let admin: Redis;
  let counting: CountingServer;
  const procs: TestProcess[] = [];
  let turns: TurnQueue | undefined;

  before(async () => {
    redis = await RedisServer.start();
    admin = new Redis(redis.url);
    counting = new CountingServer();
    await counting.listen();
  });
  after(async () => {
    await turns?.close();
    await Promise.all(procs.map((p) => p.stop(10_000)));
    admin.disconnect();
    await counting.close();
    await redis.stop();
  });

  it("keeps a tenant's combined rate and concurrency within its limits, and a limit change holds at the next admission", async () => {
    const prefix = testPrefix();
    for (let i = 0; i < 3; i++) procs.push(await TestProcess.start(fixture('governed-worker-main.js'), [redis.url, prefix, counting.url, JSON.stringify(LIMITS)]));
    turns = new TurnQueue({ connection: redis.url, prefix, unavailableAfterMs: 30_000 });
    const queue = turns;
    let sessions = 0;
    const submit = (tenant: string, plan: Plan): Promise<TurnHandle> => queue.submit({ tenant, session: `session-${sessions++}`, input: planInput(plan) });
    const changeLimits = async (tenant: string, limits: object): Promise<void> => {
      await admin.del(`${prefix}:test-limits-acks`);
      await admin.publish(`${prefix}:test-limits`, JSON.stringify({ tenant, limits }));
      await until(async () => (await admin.llen(`${prefix}:test-limits-acks`)) === 3, 10_000, 'every worker to take the new limits');
    };

    // 1. Caps and pacing, all at once: 30 one-step turns for `paced`, 24 turns of 2 steps (2 tool calls each) for `capped`.
    const paced = await Promise.all(Array.from({ length: 30 }, (_, i) => submit('paced', { label: `p${i}`, steps: [] })));
    const capped = await Promise.all(Array.from({ length: 24 }, (_, i) => submit('capped', { label: `c${i}`, steps: [[{ tool: 'work' }, { tool: 'work' }]] })));
    const workersOf = async (handles: readonly TurnHandle[]): Promise<Set<string>> => {
      const workers = new Set<string>();
      for (const handle of handles) for await (const event of handle.events()) if (event.type === 'turn_start') workers.add((event as Extract<TurnEvent, { type: 'turn_start' }>).worker);
      return workers;
    };
    const cappedResults = await Promise.allSettled(capped.map((h) => h.result()));
    const pacedResults = await Promise.allSettled(paced.map((h) => h.result()));
    expect(cappedResults.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason))).to.deep.equal([]);
    const generate = counting.seen('generate', 'capped');
    const tools = counting.seen('tool', 'capped');
    expect(generate.arrivals).to.have.length(48);
    expect(generate.max, 'model requests of `capped` at once, over the 3 workers').to.equal(2);
    expect(tools.arrivals).to.have.length(48);
    expect(tools.max, 'tool calls of `capped` at once, over the 3 workers').to.equal(1);
    expect(generate.pids.size, 'the turns ran on all 3 workers').to.equal(3);
    expect((await workersOf(capped)).size, 'workers that ran turns of `capped`').to.equal(3);
    expect((await workersOf(paced)).size, 'workers that ran turns of `paced`').to.equal(3);

    const pacedSeen = counting.seen('generate', 'paced');
    const firstPaced = pacedSeen.arrivals[0]!;
    expect(pacedSeen.arrivals, 'requests of `paced` in its first minute, over the 3 workers').to.have.length(12);
    expect(pacedSeen.pids.size, 'requests of `paced` admitted on more than one worker').to.be.greaterThan(1);
    const refused = pacedResults.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason as TurnFailedError);
    expect(refused).to.have.length(18);
    for (const error of refused) {
      expect(TurnFailedError.isInstance(error)).to.equal(true);
      expect(TenantLimitError.isInstance(error.cause), error.message).to.equal(true);
      expect(error.cause).to.deep.include({ tenant: 'paced', limit: 'requestsPerMinute', max: 12 });
      // The window's count: the 12 admitted, plus other workers' refused requests not given back yet.
      expect((error.cause as TenantLimitError).current).to.be.at.least(12);
    }

    // 2. A cap lowered under load, on every worker: once the steps admitted before it ended, one at a time.
    counting.holdMs.generate = 150;
    const load = await Promise.all(Array.from({ length: 30 }, (_, i) => submit('capped', { label: `l${i}`, steps: [] })));
    await until(() => generate.active === 2, 20_000, 'two `capped` requests at once');
    await changeLimits('capped', { maxConcurrentSteps: 1, maxConcurrentToolCalls: 1 });
    await sleep(500); // the steps admitted under the old cap end (150 ms each)
    generate.max = generate.active;
    const before = generate.arrivals.length;
    const loadResults = await Promise.allSettled(load.map((h) => h.result()));
    expect(loadResults.filter((r) => r.status === 'rejected')).to.deep.equal([]);
    expect(generate.arrivals.length - before, 'requests made after the change').to.be.greaterThan(5);
    expect(generate.max, 'model requests of `capped` at once after the change').to.equal(1);

    // 3. A rate raised on every worker: the window of the minute keeps its count, the new limit applies at once.
    await changeLimits('paced', { requestsPerMinute: 20, onLimit: 'refuse' });
    const more = await Promise.all(Array.from({ length: 10 }, (_, i) => submit('paced', { label: `q${i}`, steps: [] })));
    const moreResults = await Promise.allSettled(more.map((h) => h.result()));
    expect(Date.now() - firstPaced, 'still in the first minute of `paced`').to.be.below(55_000);
    expect(moreResults.filter((r) => r.status === 'fulfilled')).to.have.length(8);
    expect(pacedSeen.arrivals).to.have.length(20);

    // Nothing left held: every place was given back.
    const holders = await admin.keys(`${prefix}:gov:cap:*`);
    const counts = await Promise.all(holders.map((key) => admin.zcard(key)));
    expect(counts.every((n) => n === 0)).to.equal(true);
  });
});
