import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Message } from '@kosong/core';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { RedisContext, TurnQueue, type TurnHandle } from '../index.js';
import { planInput, type Plan } from '../testing/plan-provider.js';
import { RedisServer } from '../testing/redis-server.js';
import { TestProcess } from '../testing/test-process.js';
import { fixture } from './fixtures.js';
import { markerCounts } from './fixtures/marker-toolset.js';
import { sleep, testPrefix } from './support.js';

/** Turns of the soak (`KOSONG_SOAK_TURNS`; the full size: 300). */
const TURNS = Number(process.env.KOSONG_SOAK_TURNS) || 60;
/** SIGKILLs of worker processes during it (`KOSONG_SOAK_KILLS`; full size: 100). */
const KILLS = Number(process.env.KOSONG_SOAK_KILLS) || 20;
const SESSIONS = 8;
const LOCK_MS = 1_000;

/** The marker of each planned call of a turn: `a` is a 'safe' tool's, `b` and `c` are 'never' tools'. */
const planOf = (label: string, n: number): Plan => ({
  label,
  steps: [
    [
      { tool: 'mark_safe', args: { mark: `${label}-a`, ms: 100 + ((n * 37) % 300) } },
      { tool: 'mark', args: { mark: `${label}-b`, ms: 300 + ((n * 53) % 1_000) } },
    ],
    [{ tool: 'mark', args: { mark: `${label}-c`, ms: 200 + ((n * 71) % 600) } }],
  ],
});

/** What a call's tool message says. */
type Verdict = 'ran' | 'interrupted' | 'worker lost' | 'other';

function verdictOf(message: Message, mark: string): Verdict {
  const text = JSON.stringify(message.content);
  if (text.includes(`marked ${mark}`)) return 'ran';
  if (text.includes('Tool call was interrupted')) return 'interrupted';
  if (text.includes('the tool worker was lost')) return 'worker lost';
  return 'other';
}

/**
 * Many SIGKILLs of agent and tool workers over many turns: 3 worker processes (an agent worker and
 * a tool worker each, as `kosong worker` runs them) and one tool worker process, each killed one
 * replaced at once. Runs are counted by the tools' own marker lines.
 */
describe(`a soak: ${KILLS} SIGKILLs of worker processes over ${TURNS} turns (real processes, real Redis)`, function () {
  this.timeout(600_000);
  let server: RedisServer;
  let admin: Redis;
  let dir: string;
  const procs: TestProcess[] = [];

  before(async () => {
    server = await RedisServer.start();
    admin = new Redis(server.url);
    dir = mkdtempSync(join(tmpdir(), 'kosong-soak-'));
  });
  after(async () => {
    await Promise.all(procs.map((p) => p.kill()));
    admin.disconnect();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("no 'never' call runs twice, each interrupted call comes back as an error result saying so, 'safe' calls run again and finish, every session loads", async () => {
    const prefix = testPrefix();
    const file = join(dir, 'markers.log');
    const roles = new Map<TestProcess, string>();
    const start = async (role: string): Promise<void> => {
      const proc = await TestProcess.start(fixture('ledger-worker-main.js'), [server.url, prefix, String(LOCK_MS), file, role]);
      procs.push(proc);
      roles.set(proc, role);
    };
    await start('both'); // publishes the tool list the others read
    await Promise.all([start('both'), start('both'), start('tools')]);
    const turns = new TurnQueue({ connection: server.url, prefix, unavailableAfterMs: 60_000 });
    const submitted: { handle: TurnHandle; session: string; label: string }[] = [];
    for (let n = 0; n < TURNS; n++) {
      const session = `soak-${n % SESSIONS}`;
      const label = `t${n}`;
      submitted.push({ handle: await turns.submit({ tenant: 'acme', session, input: planInput(planOf(label, n)) }), session, label });
    }
    let finished = false;
    const results = Promise.allSettled(submitted.map(({ handle }) => handle.result())).finally(() => (finished = true));

    // The killer: a random live process every 0.3–0.8 s (while 2 are up), replaced by one of the same role.
    let kills = 0;
    let random = 42;
    const next = (): number => (random = (random * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const replacements: Promise<void>[] = [];
    while (kills < KILLS && !finished) {
      await sleep(300 + next() * 500);
      const alive = procs.filter((p) => p.alive);
      if (alive.length < 2) continue; // replacements are starting
      const victim = alive[Math.floor(next() * alive.length)]!;
      await victim.kill();
      kills++;
      replacements.push(start(roles.get(victim)!));
    }
    await Promise.all(replacements);
    const settled = await results;
    await turns.close();

    const failures = settled.flatMap((s, i) => (s.status === 'rejected' ? [`${submitted[i]!.label}: ${(s.reason as Error).message}`] : []));
    expect(failures, 'every turn completes').to.deep.equal([]);
    const counts = markerCounts(file);
    const verdicts = { never: new Map<Verdict, number>(), safe: new Map<Verdict, number>() };
    for (let s = 0; s < SESSIONS; s++) {
      const context = new RedisContext({ connection: admin, tenant: 'acme', session: `soak-${s}`, prefix });
      await context.restore(); // every session loads: valid messages and records only
      expect(context.openStep, `soak-${s}: no step left open`).to.equal(undefined);
      const history = context.history;
      for (let i = 0; i < history.length; i++) {
        const message = history[i]!;
        for (const [k, call] of (message.toolCalls ?? []).entries()) {
          const result = history[i + 1 + k]!;
          expect(result.toolCallId, `soak-${s}: whole steps, in call order`).to.equal(call.id);
          const { mark } = JSON.parse(call.function.arguments ?? '{}') as { mark: string };
          const verdict = verdictOf(result, mark);
          const kind = call.function.name === 'mark' ? verdicts.never : verdicts.safe;
          kind.set(verdict, (kind.get(verdict) ?? 0) + 1);
          const runs = counts.get(mark) ?? 0;
          if (call.function.name === 'mark') {
            expect(runs, `${mark}: a 'never' call runs at most once`).to.be.at.most(1);
            expect(verdict, `${mark}: ran (${runs}), or was interrupted and says so: ${JSON.stringify(result.content)}`).to.not.equal('other');
            if (verdict === 'ran') expect(runs).to.equal(1);
          } else {
            expect(verdict, `${mark}: a 'safe' call runs again until it finishes: ${JSON.stringify(result.content)}`).to.equal('ran');
          }
        }
      }
    }
    const twice = [...counts].filter(([mark, n]) => !mark.endsWith('-a') && n > 1);
    expect(twice, "'never' calls that ran twice").to.deep.equal([]);
    const safeReruns = [...counts].filter(([mark, n]) => mark.endsWith('-a') && n > 1).length;
    console.log(
      `      soak: ${TURNS} turns, ${kills} kills; 'never' calls: ${JSON.stringify(Object.fromEntries(verdicts.never))}; ` +
        `'safe' calls: ${JSON.stringify(Object.fromEntries(verdicts.safe))}, ${safeReruns} ran more than once`,
    );
  });
});
