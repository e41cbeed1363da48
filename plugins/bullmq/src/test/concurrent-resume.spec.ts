import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ResumeConflictError, type AgentTurnResult } from '@kosong/core';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { RedisContext } from '../index.js';
import { planInput } from '../testing/plan-provider.js';
import { RedisServer } from '../testing/redis-server.js';
import { TestProcess } from '../testing/test-process.js';
import { approvalAgent } from './fixtures/approval-agent.js';
import { fixture } from './fixtures.js';
import { markerCounts } from './fixtures/marker-toolset.js';
import { testPrefix } from './support.js';

/** Pairs of resumes in this process (half approve/approve, half approve/deny); `KOSONG_RESUME_PAIRS` sets it. */
const PAIRS = Number(process.env.KOSONG_RESUME_PAIRS) || 20;
/** Pairs of resumes in two processes; `KOSONG_RESUME_PROCESS_PAIRS` sets it. */
const PROCESS_PAIRS = Number(process.env.KOSONG_RESUME_PROCESS_PAIRS) || 4;

type Decision = 'approve' | 'deny';
type Outcome = { readonly stopReason: string } | { readonly error: string; readonly message?: string };

/**
 * Two resumes of one pending step at once, each on its own `RedisContext` of the session: one wins
 * (its claim), the other is refused with `ResumeConflictError` before anything runs. Runs are counted
 * by the tool's own marker line.
 */
describe('concurrent resumes of one pending step (real Redis)', function () {
  this.timeout(180_000);
  let server: RedisServer;
  let admin: Redis;
  let prefix: string;
  let dir: string;
  let file: string;

  before(async () => {
    server = await RedisServer.start();
    admin = new Redis(server.url);
    prefix = testPrefix();
    dir = mkdtempSync(join(tmpdir(), 'kosong-resumes-'));
    file = join(dir, 'markers.log');
  });
  after(async () => {
    admin.disconnect();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const context = (session: string): RedisContext => new RedisContext({ connection: server.url, tenant: 'acme', session, prefix });

  /** A session whose one `mark` call waits for approval. Returns the call's id. */
  async function pendingSession(session: string): Promise<string> {
    const setup = context(session);
    const result = await approvalAgent(setup, file).run(planInput({ label: session, steps: [[{ tool: 'mark', args: { mark: `${session}-1`, ms: 20 } }]] }));
    await setup.close();
    expect(result.stopReason).to.equal('approval_required');
    return result.pendingApprovals![0]!.toolCall.id;
  }

  /** Checks a pair: one resume won, the other was refused before running anything; the tool ran as the winner decided; the session loads. */
  async function checkPair(session: string, decisions: readonly Decision[], outcomes: readonly Outcome[]): Promise<void> {
    const runs = markerCounts(file).get(`${session}-1`) ?? 0;
    expect(runs, `${session}: runs of the tool ${JSON.stringify(outcomes)}`).to.be.at.most(1);
    const won = outcomes.flatMap((o, i) => ('stopReason' in o ? [i] : []));
    expect(won, `${session}: one resume wins ${JSON.stringify(outcomes)}`).to.have.length(1);
    const lost = outcomes.filter((o) => 'error' in o);
    expect(lost.map((o) => 'error' in o && o.error), `${session}: the other is refused`).to.deep.equal(['ResumeConflictError']);
    const winner = decisions[won[0]!]!;
    expect(runs, `${session}: runs of the tool (winner: ${winner})`).to.equal(winner === 'approve' ? 1 : 0);
    const check = context(session);
    await check.restore();
    await check.close();
    expect(check.pendingStep, `${session}: nothing waits`).to.equal(undefined);
    expect(check.openStep, `${session}: no step open`).to.equal(undefined);
    expect(check.history.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'tool', 'assistant']);
    expect(JSON.stringify(check.history[2]!.content)).to.include(winner === 'approve' ? `marked ${session}-1` : 'The tool call was denied');
  }

  const decisionsOf = (n: number): readonly Decision[] => (n % 2 === 0 ? ['approve', 'approve'] : ['approve', 'deny']);
  const asDecision = (decision: Decision) => (decision === 'approve' ? { type: 'approve' as const } : { type: 'deny' as const, reason: 'no' });

  it(`${PAIRS} pairs in one process, each resume on its own context (approve/approve and approve/deny): the tool runs at most once`, async () => {
    for (let n = 0; n < PAIRS; n++) {
      const session = `same-${n}`;
      const callId = await pendingSession(session);
      const contexts = [context(session), context(session)];
      await Promise.all(contexts.map((c) => c.restore()));
      const decisions = decisionsOf(n);
      const settled = await Promise.allSettled(contexts.map((c, i) => approvalAgent(c, file).resume({ decisions: { [callId]: asDecision(decisions[i]!) } })));
      await Promise.all(contexts.map((c) => c.close()));
      const outcomes: Outcome[] = settled.map((s) =>
        s.status === 'fulfilled' ? { stopReason: (s.value as AgentTurnResult).stopReason } : { error: ResumeConflictError.isInstance(s.reason) ? 'ResumeConflictError' : String(s.reason) },
      );
      await checkPair(session, decisions, outcomes);
    }
  });

  it('two agents on one context: the second resume is refused at once', async () => {
    const session = 'one-context';
    const callId = await pendingSession(session);
    const shared = context(session);
    await shared.restore();
    const settled = await Promise.allSettled([0, 1].map(() => approvalAgent(shared, file).resume({ decisions: { [callId]: { type: 'approve' } } })));
    await shared.close();
    const outcomes: Outcome[] = settled.map((s) => (s.status === 'fulfilled' ? { stopReason: s.value.stopReason } : { error: ResumeConflictError.isInstance(s.reason) ? 'ResumeConflictError' : String(s.reason) }));
    await checkPair(session, ['approve', 'approve'], outcomes);
  });

  it(`${PROCESS_PAIRS} pairs in two processes at once (approve/approve and approve/deny): the tool runs at most once`, async function () {
    this.timeout(60_000 + PROCESS_PAIRS * 15_000); // two processes start for each pair
    for (let n = 0; n < PROCESS_PAIRS; n++) {
      const session = `procs-${n}`;
      const callId = await pendingSession(session);
      const decisions = decisionsOf(n);
      const procs = await Promise.all(decisions.map((d) => TestProcess.start(fixture('resume-main.js'), [server.url, prefix, session, callId, d, file])));
      for (const proc of procs) proc.child.kill('SIGUSR2');
      await Promise.all(procs.map((p) => p.exited));
      const outcomes = procs.map((p): Outcome => {
        const line = p.output.join('').split('\n').find((l) => l.startsWith('outcome '));
        if (line === undefined) throw new Error(`a resumer printed no outcome:\n${p.output.join('')}`);
        return JSON.parse(line.slice('outcome '.length)) as Outcome;
      });
      await checkPair(session, decisions, outcomes);
    }
  });
});
