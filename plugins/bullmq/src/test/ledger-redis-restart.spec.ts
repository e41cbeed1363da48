import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Message } from '@kosong/core';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { RedisContext, RedisUnavailableError, TurnQueue, type TurnHandle } from '../index.js';
import { planInput, type Plan } from '../testing/plan-provider.js';
import { RedisServer } from '../testing/redis-server.js';
import { TestProcess } from '../testing/test-process.js';
import { fixture } from './fixtures.js';
import { markerCounts } from './fixtures/marker-toolset.js';
import { sleep, testPrefix, until } from './support.js';

/** Redis SIGKILLs (each back after 1.5 s, same port and directory) during the test (`KOSONG_REDIS_RESTARTS`; the issue's full size: 10). */
const RESTARTS = Number(process.env.KOSONG_REDIS_RESTARTS) || 3;
/** SIGSTOPs of Redis longer than the workers' locks (`KOSONG_REDIS_STOPS`; full size: 5). */
const STOPS = Number(process.env.KOSONG_REDIS_STOPS) || 1;
const TURNS = Number(process.env.KOSONG_REDIS_TURNS) || 24;
const SESSIONS = 8;
const LOCK_MS = 3_000;

const planOf = (label: string, n: number): Plan => ({
  label,
  parts: 3,
  partDelayMs: 20,
  steps: [
    [
      { tool: 'mark_safe', args: { mark: `${label}-a`, ms: 100 + ((n * 37) % 300) } },
      { tool: 'mark', args: { mark: `${label}-b`, ms: 300 + ((n * 53) % 1_000) } },
    ],
    [{ tool: 'mark', args: { mark: `${label}-c`, ms: 200 + ((n * 71) % 600) } }],
  ],
});

const ran = (message: Message, mark: string): boolean => JSON.stringify(message.content).includes(`marked ${mark}`);
const saysInterrupted = (message: Message): boolean => /Tool call was interrupted|the tool worker was lost/.test(JSON.stringify(message.content));

/**
 * Redis itself fails under in-flight turns run by worker processes: SIGKILLed (AOF, `appendfsync
 * always`) and back on the same port and directory after 1.5 s, and frozen (SIGSTOP) for longer
 * than the workers' locks. Runs are counted by the tools' own marker lines.
 */
describe(`Redis restarted ${RESTARTS} times and frozen ${STOPS} times under in-flight turns (real processes, AOF always)`, function () {
  this.timeout(600_000);
  // A double run of a 'never' call (same key, same pid) was seen in about 1 of 8 CI runs before
  // 35f511e. That commit fixed a path that explains it: a call whose resent add found its job gone
  // (removed by the recovery of its turn on another worker, after the job had run) was enqueued
  // again for any tool, so a finished 'never' job could run a second time (resent-add.spec.ts). Since
  // then: 60 runs of this spec alone, 2 at the issue's full size (KOSONG_REDIS_RESTARTS=10,
  // KOSONG_REDIS_STOPS=5, KOSONG_REDIS_TURNS=60), and the 300-turn, 100-kill soak: no double run.
  // That the fix was the cause is not proven, so one retry stays, so that a rare failure does not
  // hide every other result of CI; a failure that repeats still fails.
  this.retries(1);
  let server: RedisServer;
  let dir: string;
  const procs: TestProcess[] = [];

  before(async () => {
    server = await RedisServer.start({ persistent: true });
    dir = mkdtempSync(join(tmpdir(), 'kosong-restart-'));
  });
  after(async () => {
    await Promise.all(procs.map((p) => p.kill()));
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("each turn completes once Redis is back, or fails with RedisUnavailableError; no 'never' call runs twice; every session loads", async () => {
    const prefix = testPrefix();
    const file = join(dir, 'markers.log');
    const start = async (): Promise<void> => {
      procs.push(await TestProcess.start(fixture('ledger-worker-main.js'), [server.url, prefix, String(LOCK_MS), file, 'both']));
    };
    await start();
    await Promise.all([start(), start()]);
    const turns = new TurnQueue({ connection: server.url, prefix, unavailableAfterMs: 60_000 });
    const submitted: { handle: TurnHandle; label: string }[] = [];
    for (let n = 0; n < TURNS; n++) {
      const label = `r${n}`;
      submitted.push({ handle: await turns.submit({ tenant: 'acme', session: `restart-${n % SESSIONS}`, input: planInput(planOf(label, n)) }), label });
    }
    const results = Promise.allSettled(submitted.map(({ handle }) => handle.result()));

    for (let i = 0; i < RESTARTS + STOPS; i++) {
      // Mid-turn: a tool has just started.
      const before = [...markerCounts(file).values()].reduce((a, b) => a + b, 0);
      await until(() => [...markerCounts(file).values()].reduce((a, b) => a + b, 0) > before, 60_000, 'a tool to start');
      if (i < RESTARTS) {
        await server.kill();
        await sleep(1_500);
        await server.launch();
      } else {
        server.pause();
        await sleep(LOCK_MS + 2_000);
        server.resume();
      }
    }
    const settled = await results;
    await turns.close();

    const unexpected = settled.flatMap((s, i) => (s.status === 'rejected' && !RedisUnavailableError.isInstance(s.reason) ? [`${submitted[i]!.label}: ${String(s.reason)}`] : []));
    expect(unexpected, 'turns fail with RedisUnavailableError only').to.deep.equal([]);
    const completed = settled.filter((s) => s.status === 'fulfilled').length;
    const counts = markerCounts(file);
    const twice = [...counts].filter(([mark, n]) => !mark.endsWith('-a') && n > 1);
    expect(twice, `'never' calls that ran twice (marker lines: ${JSON.stringify(twice.map(([mark]) => readFileSync(file, 'utf8').split('\n').filter((line) => line.startsWith(`${mark} `))))})`).to.deep.equal([]);
    const admin = new Redis(server.url);
    let interrupted = 0;
    try {
      for (let s = 0; s < SESSIONS; s++) {
        const context = new RedisContext({ connection: admin, tenant: 'acme', session: `restart-${s}`, prefix });
        await context.restore(); // every session loads
        const history = context.history;
        for (let i = 0; i < history.length; i++) {
          for (const [k, call] of (history[i]!.toolCalls ?? []).entries()) {
            const result = history[i + 1 + k]!;
            expect(result.toolCallId, `restart-${s}: whole steps, in call order`).to.equal(call.id);
            const { mark } = JSON.parse(call.function.arguments ?? '{}') as { mark: string };
            if (call.function.name === 'mark_safe') continue;
            if (!ran(result, mark)) {
              expect(saysInterrupted(result), `${mark}: an interrupted call says so: ${JSON.stringify(result.content)}`).to.equal(true);
              interrupted++;
            }
          }
        }
      }
    } finally {
      admin.disconnect();
    }
    expect(completed, 'turns complete once Redis is back').to.be.greaterThan(0);
    console.log(`      redis: ${RESTARTS} restarts, ${STOPS} stops; ${completed} of ${TURNS} turns completed, ${TURNS - completed} failed with RedisUnavailableError; ${interrupted} 'never' calls interrupted`);
  });
});
