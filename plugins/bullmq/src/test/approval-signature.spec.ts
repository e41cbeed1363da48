/**
 * Signed approvals (issue 21 item 4): whoever can write to Redis can queue a resumption of any
 * tenant's session, but with an approval secret the agent worker runs no call on decisions that the
 * secret did not sign for that tenant, session, waiting step and resumption. The tool's runs are
 * counted by its own marker file.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kernel, definePlugin, requireApproval, tokenUsage, toolCall, type ApprovalDecision, type PendingStep } from '@kosong/core';
import { Queue } from 'bullmq';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { callsOf, checkSecretOption, signDecisions, verifyDecisions } from '../approval-signature.js';
import { AgentWorker, ApprovalSignatureError, RemoteToolset, SessionKeys, ToolWorker, TurnFailedError, TurnQueue, type QueuedTurnResult } from '../index.js';
import { TURN_QUEUE } from '../keys.js';
import { PlanProvider, planInput } from '../testing/plan-provider.js';
import { RedisServer } from '../testing/redis-server.js';
import { SUBMIT_SCRIPT } from '../turn-scripts.js';
import { MarkerToolset, markerCounts } from './fixtures/marker-toolset.js';
import { closeAll, testPrefix, until } from './support.js';

const SECRETS: Record<string, string> = { acme: 'acme-approval-secret-0123456789', globex: 'globex-approval-secret-987654321' };
/** The workers' secrets: each tenant's own (a tenant's submitter knows only its own). */
const workerSigning = { approvalSecret: (tenant: string | undefined) => (tenant === undefined ? undefined : SECRETS[tenant]) };
const signing = (tenant: string): { approvalSecret: string } => ({ approvalSecret: SECRETS[tenant]! });

describe('signed approvals: a forged resumption runs nothing (real Redis)', function () {
  this.timeout(60_000);
  let server: RedisServer;
  let attacker: Redis;
  let attackerQueue: Queue;
  let prefix: string;
  let dir: string;
  let markerFile: string;
  const closers: (() => Promise<unknown>)[] = [];

  before(async () => {
    server = await RedisServer.start();
  });
  after(async () => {
    await server.stop();
  });
  beforeEach(async () => {
    prefix = testPrefix();
    dir = mkdtempSync(join(tmpdir(), 'kosong-signed-approval-'));
    markerFile = join(dir, 'marks');
    // Any Redis client: no secret, no kosong class, just commands and a BullMQ queue on them.
    attacker = new Redis(server.url);
    attackerQueue = new Queue(TURN_QUEUE, { connection: attacker, prefix });
    closers.push(async () => {
      await attackerQueue.close();
      attacker.disconnect();
    });
    for (const tenant of ['acme', 'globex']) {
      const tools = await ToolWorker.start({ connection: server.url, toolset: new MarkerToolset(markerFile), name: 'marks', tenant, prefix });
      closers.push(() => tools.close({ deadlineMs: 500 }));
    }
    await agentWorker();
    closers.push(async () => rmSync(dir, { recursive: true, force: true }));
  });
  afterEach(async () => {
    await closeAll(closers);
  });

  /** An agent worker with the approval secrets: tenants acme and globex, whose `mark` calls wait for approval (no handler). */
  async function agentWorker(): Promise<void> {
    const kernel = new Kernel();
    await kernel.use(definePlugin({ name: 'plan', setup: (ctx) => ctx.bindChatProvider('plan', new PlanProvider(), { default: true }) }));
    for (const tenant of ['acme', 'globex']) {
      const remote = await RemoteToolset.connect({ connection: server.url, name: 'marks', tenant, prefix });
      closers.push(() => remote.close());
      kernel.tenants.define(tenant, { toolset: requireApproval(remote, ['mark']) });
    }
    const worker = new AgentWorker({ connection: server.url, kernel, prefix, concurrency: 2, lockDurationMs: 3_000, waitTurnMs: 50, ...workerSigning });
    await worker.start();
    closers.push(async () => {
      await worker.close({ deadlineMs: 500 });
      await kernel.dispose();
    });
  }

  function turnQueue(tenant: string | undefined): TurnQueue {
    const turns = new TurnQueue({ connection: server.url, prefix, ...(tenant === undefined ? {} : signing(tenant)) });
    closers.push(() => turns.close());
    return turns;
  }

  /** A turn of `tenant` in `session` whose call `mark` (marker `mark`) is deferred. */
  async function deferred(turns: TurnQueue, tenant: string, session: string, mark: string, label = 'v'): Promise<QueuedTurnResult> {
    const turn = await turns.submit({ tenant, session, input: planInput({ label, steps: [[{ tool: 'mark', args: { mark } }]] }) });
    const result = await turn.result();
    expect(result.stopReason).to.equal('approval_required');
    return result;
  }

  /** What a raw Redis client does to queue a resumption: the turn's state, then its BullMQ job. */
  async function forge(tenant: string, session: string, resume: Record<string, unknown>, turnId: string = randomUUID()): Promise<string> {
    const keys = new SessionKeys(prefix, tenant, session);
    await attacker.eval(SUBMIT_SCRIPT, 3, keys.seq, keys.pending, keys.turn(turnId), turnId, tenant, session, Date.now(), 3_600);
    await attackerQueue.add('turn', { turnId, tenant, session, input: [], options: {}, resume }, { jobId: turnId });
    return turnId;
  }

  /** How a turn ends: its result, or the name of the error it failed with. */
  async function outcome(turns: TurnQueue, turnId: string, tenant: string, session: string): Promise<QueuedTurnResult | string> {
    try {
      return await turns.handle(turnId, tenant, session).result();
    } catch (error) {
      expect(error).to.satisfy(TurnFailedError.isInstance);
      return `${(error as TurnFailedError).errorName}: ${(error as Error).message}`;
    }
  }

  const approve: ApprovalDecision = { type: 'approve' };

  it("a raw Redis client cannot approve another tenant's deferred call: unsigned or made-up signed decisions fail the turn (ApprovalSignatureError), the call stays waiting, and the tool never runs", async () => {
    const acme = turnQueue('acme');
    const result = await deferred(acme, 'acme', 'chat', 'victim');
    const [pending] = result.pendingApprovals!;
    const decisions = { [pending!.toolCall.id]: approve };

    const attempts = [
      await forge('acme', 'chat', { decisions }), // unsigned
      await forge('acme', 'chat', { decisions, signed: { payload: '{}', signature: 'AAAA' } }), // made up
    ];
    for (const turnId of attempts) {
      const ended = await outcome(acme, turnId, 'acme', 'chat');
      expect(ended, 'the forged resumption fails').to.be.a('string').and.match(/^ApprovalSignatureError: /);
    }
    expect(markerCounts(markerFile).get('victim') ?? 0, 'the tool never ran').to.equal(0);

    // The call still waits: acme's own signed decision runs it, once.
    const resumed = await acme.resume({ tenant: 'acme', session: 'chat', decisions });
    expect((await resumed.result()).stopReason).to.equal('no_tool_calls');
    expect(markerCounts(markerFile).get('victim')).to.equal(1);
  });

  /** The resume data (decisions and signature) of a resumption that ran, read from its job in Redis as anyone can. */
  async function stolen(turnId: string): Promise<Record<string, unknown>> {
    const job = await attackerQueue.getJob(turnId);
    return (job!.data as { resume: Record<string, unknown> }).resume;
  }

  it('a signature is good for one resumption of one step: copied to another job, session, tenant or a later step with the same call id, it is refused', async () => {
    const acme = turnQueue('acme');
    // A resumption signed and run legitimately: its job (decisions, signature) stays readable in Redis.
    const first = await deferred(acme, 'acme', 'chat', 'legit');
    const decisions = { [first.pendingApprovals![0]!.toolCall.id]: approve };
    const legit = await acme.resume({ tenant: 'acme', session: 'chat', decisions, pendingApprovals: first.pendingApprovals! });
    expect((await legit.result()).stopReason).to.equal('no_tool_calls');
    expect(markerCounts(markerFile).get('legit')).to.equal(1);
    const resume = await stolen(legit.turnId);
    expect(resume.signed, 'the job carries a signature').to.be.an('object');
    expect(JSON.stringify(resume), 'never the secret').not.to.include(SECRETS.acme);

    // The same plan in another session, and again in the same one: the waiting call has the same id ('v-s1-c1').
    await deferred(acme, 'acme', 'other', 'copied-to-session');
    await deferred(acme, 'acme', 'chat', 'later-step');
    const globex = turnQueue('globex');
    await deferred(globex, 'globex', 'chat', 'copied-to-tenant');
    const refusals = new Map<string, string>();
    refusals.set('another job', (await outcome(acme, await forge('acme', 'chat', resume), 'acme', 'chat')) as string);
    // The same job id again, the job and the turn before it removed: bound to its session, tenant and step all the same.
    let last: readonly [string, string] = ['acme', 'chat'];
    for (const [what, tenant, session] of [
      ['another session', 'acme', 'other'],
      ['another tenant', 'globex', 'chat'],
      ['a later step', 'acme', 'chat'],
    ] as const) {
      await until(async () => (await attackerQueue.getJob(legit.turnId))?.finishedOn !== undefined, 10_000, 'the job to finish');
      await attackerQueue.remove(legit.turnId);
      const keys = new SessionKeys(prefix, ...last);
      await attacker.del(keys.turn(legit.turnId), keys.events(legit.turnId));
      refusals.set(what, (await outcome(acme, await forge(tenant, session, resume, legit.turnId), tenant, session)) as string);
      last = [tenant, session];
    }
    expect(refusals.get('another job')).to.match(/^ApprovalSignatureError: .*signed for another resumption/);
    expect(refusals.get('another session')).to.match(/^ApprovalSignatureError: .*signed for another session/);
    expect(refusals.get('another tenant')).to.match(/^ApprovalSignatureError: .*not the approval secret's/); // globex's secret is not acme's
    expect(refusals.get('a later step')).to.match(/^ApprovalSignatureError: .*signed for step .* and step .* waits/);
    const counts = markerCounts(markerFile);
    expect([...counts.keys()].sort(), 'only the legit call ever ran').to.deep.equal(['legit']);
  });

  it("a call changed in Redis after it was shown is refused: the signature covers the tool and arguments the submitter saw (pendingApprovals)", async () => {
    const acme = turnQueue('acme');
    const shown = await deferred(acme, 'acme', 'chat', 'harmless');
    // Someone with Redis access rewrites the waiting call's arguments before the decision is sent.
    const meta = new SessionKeys(prefix, 'acme', 'chat').meta;
    const stored = (await attacker.hget(meta, 'pendingStep'))!;
    expect(stored).to.include('harmless');
    await attacker.hset(meta, 'pendingStep', stored.replaceAll('harmless', 'evil'));
    const decisions = { [shown.pendingApprovals![0]!.toolCall.id]: approve };
    const turn = await acme.resume({ tenant: 'acme', session: 'chat', decisions, pendingApprovals: shown.pendingApprovals! });
    expect(await outcome(acme, turn.turnId, 'acme', 'chat')).to.match(/^ApprovalSignatureError: .*is not the one that was approved \(its tool or arguments changed in Redis\)/);
    expect(markerCounts(markerFile).size, 'neither ran').to.equal(0);
  });

  it('decisions signed with another tenant\'s secret, or by a queue without a secret, are refused; decisions about nothing need no signature', async () => {
    const acme = turnQueue('acme');
    const result = await deferred(acme, 'acme', 'chat', 'victim');
    const decisions = { [result.pendingApprovals![0]!.toolCall.id]: approve };
    // A globex submitter signs with the secret it has: globex's.
    const globexSigned = await turnQueue('globex').resume({ tenant: 'acme', session: 'chat', decisions });
    expect(await outcome(acme, globexSigned.turnId, 'acme', 'chat')).to.match(/^ApprovalSignatureError: .*not the approval secret's/);
    const unsigned = await turnQueue(undefined).resume({ tenant: 'acme', session: 'chat', decisions });
    expect(await outcome(acme, unsigned.turnId, 'acme', 'chat')).to.match(/^ApprovalSignatureError: .*not signed/);
    // No decision: nothing is decided, the turn ends waiting again, naming the call.
    const nothing = await turnQueue(undefined).resume({ tenant: 'acme', session: 'chat', decisions: {} });
    const again = await nothing.result();
    expect(again.stopReason).to.equal('approval_required');
    expect(again.pendingApprovals!.map((p) => p.toolCall.id)).to.deep.equal(Object.keys(decisions));
    expect(markerCounts(markerFile).size).to.equal(0);
    // A deny is a decision too: a forged one is refused as well (the call still waits), a signed one goes.
    const forgedDeny = await forge('acme', 'chat', { decisions: { [Object.keys(decisions)[0]!]: { type: 'deny', reason: 'forged' } } });
    expect(await outcome(acme, forgedDeny, 'acme', 'chat')).to.match(/^ApprovalSignatureError: /);
    const approved = await acme.resume({ tenant: 'acme', session: 'chat', decisions, pendingApprovals: again.pendingApprovals! });
    expect((await approved.result()).stopReason).to.equal('no_tool_calls');
    expect(markerCounts(markerFile).get('victim')).to.equal(1);
  });

  it('with a secret, TurnQueue.resume cannot sign without knowing the step: earlier turns pending and no pendingApprovals is a TypeError; calls of another step are refused before anything is queued', async () => {
    const acme = turnQueue('acme');
    const result = await deferred(acme, 'acme', 'chat', 'waits');
    const decisions = { [result.pendingApprovals![0]!.toolCall.id]: approve };
    const keys = new SessionKeys(prefix, 'acme', 'chat');
    await attacker.zadd(keys.pending, 0, 'an-earlier-turn'); // as if an earlier turn were still queued
    const error = await acme.resume({ tenant: 'acme', session: 'chat', decisions }).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(TypeError);
    expect((error as Error).message).to.match(/pass the pendingApprovals/);
    await attacker.zrem(keys.pending, 'an-earlier-turn');
    const otherStep = result.pendingApprovals!.map((p) => ({ ...p, stepId: 'another-step' }));
    const refused = await acme.resume({ tenant: 'acme', session: 'chat', decisions, pendingApprovals: otherStep }).catch((e: unknown) => e);
    expect((refused as Error).name).to.equal('NoPendingApprovalError');
    expect(await attacker.zcard(keys.pending), 'nothing queued').to.equal(0);
  });
});

describe('approval signatures (no Redis)', () => {
  const pending: PendingStep = {
    stepId: 'step-1',
    step: 1,
    message: { role: 'assistant', content: [], toolCalls: [toolCall('c1', 'bash', '{"command":"ls"}'), toolCall('c2', 'bash', '{"command":"pwd"}')] },
    results: [undefined, undefined],
    usage: undefined,
    turnUsage: tokenUsage(),
    messageId: undefined,
    finishReason: 'tool_calls',
    deferredAt: 1,
    expiresAt: undefined,
  };
  const secret = Buffer.from('a-secret-of-enough-bytes');
  const decisions: Record<string, ApprovalDecision> = { c1: { type: 'approve' }, c2: { type: 'deny', reason: 'no' } };
  const what = { tenant: 'acme', session: 's', turnId: 'turn-1', stepId: 'step-1', decisions, calls: callsOf(pending.message.toolCalls!) };
  const check = { tenant: 'acme', session: 's', turnId: 'turn-1', pending, decisions, maxAgeMs: 60_000 };
  const refusal = (fn: () => void): string => {
    try {
      fn();
    } catch (error) {
      expect(error).to.satisfy(ApprovalSignatureError.isInstance);
      return (error as Error).message;
    }
    throw new Error('not refused');
  };

  it('verifies what it signed, and refuses every field changed', () => {
    const signed = signDecisions(secret, what, 1_000);
    verifyDecisions(secret, signed, check, 2_000);
    expect(refusal(() => verifyDecisions(Buffer.from('another-secret-of-bytes'), signed, check, 2_000))).to.match(/not the approval secret's/);
    expect(refusal(() => verifyDecisions(secret, { ...signed, payload: signed.payload.replace('"s"', '"t"') }, check, 2_000))).to.match(/not the approval secret's/);
    expect(refusal(() => verifyDecisions(secret, signed, { ...check, tenant: 'globex' }, 2_000))).to.match(/another session/);
    expect(refusal(() => verifyDecisions(secret, signed, { ...check, session: 't' }, 2_000))).to.match(/another session/);
    expect(refusal(() => verifyDecisions(secret, signed, { ...check, turnId: 'turn-2' }, 2_000))).to.match(/another resumption/);
    expect(refusal(() => verifyDecisions(secret, signed, { ...check, pending: { ...pending, stepId: 'step-2' } }, 2_000))).to.match(/signed for step step-1, and step step-2 waits/);
    expect(refusal(() => verifyDecisions(secret, signed, { ...check, decisions: { ...decisions, c2: { type: 'approve' } } }, 2_000))).to.match(/decision about "c2" is not the one/);
    expect(refusal(() => verifyDecisions(secret, signed, { ...check, decisions: { c1: { type: 'approve' } } }, 2_000))).to.match(/not the decisions that were signed/);
    const changed = { ...pending, message: { ...pending.message, toolCalls: [toolCall('c1', 'bash', '{"command":"rm -rf /"}'), pending.message.toolCalls![1]!] } };
    expect(refusal(() => verifyDecisions(secret, signed, { ...check, pending: changed }, 2_000))).to.match(/"c1" in the waiting step is not the one that was approved/);
    expect(refusal(() => verifyDecisions(secret, signed, check, 1_000 + 60_001))).to.match(/not within 60000 ms/);
    expect(refusal(() => verifyDecisions(secret, signed, check, 1_000 - 600_000))).to.match(/not within/); // from the future
    expect(refusal(() => verifyDecisions(secret, undefined, check))).to.match(/not signed/);
    expect(refusal(() => verifyDecisions(undefined, signed, check))).to.match(/no approval secret for the tenant/);
  });

  it('refuses secrets that are too short or not a secret, naming the owner', () => {
    expect(() => checkSecretOption('short', 'TurnQueue')).to.throw(TypeError, /TurnQueue: approvalSecret must be at least 16 bytes/);
    expect(() => checkSecretOption(42, 'AgentWorker')).to.throw(TypeError, /AgentWorker: approvalSecret must be a string or bytes/);
    expect(() => new TurnQueue({ connection: 'redis://127.0.0.1:1', approvalSecret: '' })).to.throw(TypeError, /at least 16 bytes/);
    expect(checkSecretOption(new Uint8Array(16), 'x')).to.be.instanceOf(Uint8Array);
  });
});
