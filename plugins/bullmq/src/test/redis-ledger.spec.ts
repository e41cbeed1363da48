import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, ResumeConflictError, step, textPart, toolCall, type Message, type Toolset } from '@kosong/core';
import { callRecordToJSON, type CallStartRecord } from '@kosong/core/context-kit';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { FencedError, RedisContext, RemoteToolset, SessionKeys, SessionLease, ToolWorker } from '../index.js';
import { APPEND_SCRIPT, LEDGER_RECORD_SCRIPT } from '../scripts.js';
import { PlanProvider, planInput } from '../testing/plan-provider.js';
import { RedisServer } from '../testing/redis-server.js';
import { MarkerToolset, markerCounts } from './fixtures/marker-toolset.js';
import { call, closeAll, testPrefix, until } from './support.js';

const user = (text: string): Message => ({ role: 'user', content: [textPart(text)] });
const calls = [toolCall('c1', 'mark', '{"mark":"m1"}'), toolCall('c2', 'mark', '{"mark":"m2"}')];
const start = (index: number, extra: Partial<CallStartRecord> = {}): CallStartRecord => ({
  type: 'start',
  key: 'acme/s1/turn-1/1',
  index,
  contentFrom: index === 0 ? 0 : 1,
  content: index === 0 ? [textPart('calling')] : [],
  callsFrom: index === 0 ? 0 : 2,
  toolCalls: index === 0 ? calls : [],
  ...extra,
});
const ok = (id: string, output: string) => ({ toolCallId: id, returnValue: { isError: false, output, message: '', display: [] } });

describe('the call ledger in Redis (RedisContext, real Redis)', function () {
  this.timeout(30_000);
  let server: RedisServer;
  let redis: Redis;
  let prefix: string;
  let keys: SessionKeys;
  let dir: string;
  const closers: (() => Promise<unknown>)[] = [];

  before(async () => {
    server = await RedisServer.start();
    redis = new Redis(server.url);
    dir = mkdtempSync(join(tmpdir(), 'kosong-ledger-'));
  });
  after(async () => {
    redis.disconnect();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    prefix = testPrefix();
    keys = new SessionKeys(prefix, 'acme', 's1');
  });
  afterEach(async () => {
    await closeAll(closers);
  });

  const context = (extra: Partial<ConstructorParameters<typeof RedisContext>[0]> = {}): RedisContext =>
    new RedisContext({ connection: redis, tenant: 'acme', session: 's1', prefix, ...extra });

  it('a start is in Redis when recordStart resolves; a copy restored elsewhere has the open step; the append of the step deletes the records with it', async () => {
    const writer = context();
    expect(writer.ledger).to.equal(writer);
    expect(writer.sessionKey).to.equal('acme/s1');
    await writer.append(user('go'));
    await writer.recordStart(start(0));
    expect(await redis.llen(keys.ledger), 'durable before it resolves').to.equal(1);
    await writer.recordOutcome({ type: 'outcome', key: 'acme/s1/turn-1/1', index: 0, result: ok('c1', 'one') });
    await writer.recordStart(start(1));

    const elsewhere = context();
    await elsewhere.restore();
    expect(elsewhere.openStep).to.deep.equal(writer.openStep);
    expect(elsewhere.openStep!.message.toolCalls!.map((c) => c.id)).to.deep.equal(['c1', 'c2']);
    expect(elsewhere.openStep!.calls).to.deep.equal([
      { started: true, result: ok('c1', 'one') },
      { started: true, result: undefined },
    ]);

    const step: Message[] = [elsewhere.openStep!.message, { role: 'tool', content: [textPart('one')], toolCallId: 'c1' }, { role: 'tool', content: [textPart('two')], toolCallId: 'c2' }];
    await elsewhere.append(...step);
    expect(elsewhere.openStep).to.equal(undefined);
    expect(await redis.exists(keys.ledger), 'closed in the same script').to.equal(0);
    const check = context();
    await check.restore();
    expect(check.openStep).to.equal(undefined);
    expect(check.history).to.have.length(4);
  });

  it('a deferred step keeps its records; completing it deletes them', async () => {
    const writer = context();
    await writer.append(user('go'));
    await writer.recordStart(start(0));
    const pending = {
      stepId: 'step-1',
      step: 1,
      message: writer.openStep!.message,
      results: [ok('c1', 'one'), undefined],
      usage: undefined,
      turnUsage: { inputOther: 0, output: 0, inputCacheRead: 0, inputCacheCreation: 0 },
      messageId: undefined,
      finishReason: undefined,
      deferredAt: 1,
      expiresAt: undefined,
    };
    await writer.deferStep(pending);
    expect(await redis.llen(keys.ledger)).to.equal(1);
    const resumer = context();
    await resumer.restore();
    expect(resumer.openStep?.key).to.equal('acme/s1/turn-1/1');
    await resumer.recordStart(start(1)); // the approved call, recorded while the step waits
    await resumer.completeStep('step-1', pending.message, { role: 'tool', content: [textPart('one')], toolCallId: 'c1' }, { role: 'tool', content: [textPart('two')], toolCallId: 'c2' });
    expect(await redis.exists(keys.ledger)).to.equal(0);
  });

  it('refuses a record that does not follow the open step, before sending anything', async () => {
    const writer = context();
    await writer.recordStart(start(0));
    const error = await writer.recordStart(start(1, { key: 'acme/s1/turn-1/2', contentFrom: 0, callsFrom: 0 })).catch((e: unknown) => e);
    expect((error as Error).message).to.match(/starts while step "acme\/s1\/turn-1\/1" is open/);
    expect(await redis.llen(keys.ledger)).to.equal(1);
  });

  it('fences records: a zombie whose lease was taken over records nothing', async () => {
    const first = (await SessionLease.acquire(redis, keys, 60_000, () => undefined))!;
    const zombie = context({ fence: first.token });
    await redis.del(keys.owner);
    const second = (await SessionLease.acquire(redis, keys, 60_000, () => undefined))!;
    expect(await zombie.recordStart(start(0)).catch((e: unknown) => e)).to.satisfy(FencedError.isInstance);
    expect(await redis.llen(keys.ledger)).to.equal(0);
    await second.release();
  });

  it('a copy that missed a write records nothing: another record, an append, or a deferral since it read the session', async () => {
    const [a, b, c] = [context(), context(), context()];
    await Promise.all([a.restore(), b.restore(), c.restore()]);
    await a.recordStart(start(0));
    const stale = await b.recordStart(start(0)).catch((e: unknown) => e);
    expect((stale as Error).message).to.match(/another writer appended to the history or recorded calls/);
    await a.append(user('more'));
    const behind = await c.recordStart(start(0)).catch((e: unknown) => e);
    expect((behind as Error).message).to.match(/another writer appended/);
    expect(await redis.exists(keys.ledger)).to.equal(0);
  });

  it('a script resent after a reconnection is applied once (the write id)', async () => {
    const args = [keys.history, keys.meta, keys.owner, keys.ledger, '', 'writer:1', 0, '', 0, '{"record":1}'];
    expect(await redis.eval(LEDGER_RECORD_SCRIPT, 4, ...args)).to.equal('OK');
    expect(await redis.eval(LEDGER_RECORD_SCRIPT, 4, ...args)).to.equal('APPLIED');
    expect(await redis.lrange(keys.ledger, 0, -1)).to.deep.equal(['{"record":1}']);
  });

  it('writes sent together and resent together after a reconnection are each applied once (numbered per writer)', async () => {
    const record = (writeId: string, at: number, text: string): (string | number)[] => [keys.history, keys.meta, keys.owner, keys.ledger, '', writeId, 0, '', at, text];
    const append = (writeId: string, expected: number, text: string): (string | number)[] => [keys.history, keys.meta, keys.owner, keys.ledger, '', writeId, expected, '', '', text];
    // Three writes of one writer were applied, their replies lost: all three come again, in order.
    expect(await redis.eval(LEDGER_RECORD_SCRIPT, 4, ...record('w:1', 0, '{"r":1}'))).to.equal('OK');
    expect(await redis.eval(LEDGER_RECORD_SCRIPT, 4, ...record('w:2', 1, '{"r":2}'))).to.equal('OK');
    expect(await redis.eval(APPEND_SCRIPT, 4, ...append('w:3', 0, '{"m":1}'))).to.equal('OK');
    for (const [script, args] of [
      [LEDGER_RECORD_SCRIPT, record('w:1', 0, '{"r":1}')],
      [LEDGER_RECORD_SCRIPT, record('w:2', 1, '{"r":2}')],
      [APPEND_SCRIPT, append('w:3', 0, '{"m":1}')],
    ] as const) {
      expect(await redis.eval(script, 4, ...args), `resent ${String(args[5])}`).to.equal('APPLIED');
    }
    expect(await redis.lrange(keys.history, 0, -1)).to.deep.equal(['{"m":1}']);
    expect(await redis.exists(keys.ledger), 'the append closed the records').to.equal(0);
    // Another writer's write, and this writer's next one, are not taken for resent ones.
    expect(await redis.eval(APPEND_SCRIPT, 4, ...append('other:1', 1, '{"m":2}'))).to.equal('OK');
    expect(await redis.eval(APPEND_SCRIPT, 4, ...append('w:4', 2, '{"m":3}'))).to.equal('OK');
    expect(await redis.eval(APPEND_SCRIPT, 4, ...append('w:4', 3, '{"m":3}'))).to.equal('APPLIED');
    expect(await redis.lrange(keys.history, 0, -1)).to.deep.equal(['{"m":1}', '{"m":2}', '{"m":3}']);
  });

  it('refuses to restore a bad ledger record, naming the session and the record', async () => {
    await redis.rpush(keys.ledger, JSON.stringify(callRecordToJSON(start(0), 0)), '{"role":"_call_settled"}');
    const error = await context().restore().catch((e: unknown) => e);
    expect((error as Error).message).to.match(/Session "s1" of tenant "acme": record 2 of the call ledger in Redis is not valid/);
  });

  describe('writes in flight together', () => {
    /** The scripts this test's connection sends, by name, in order. */
    function scriptsSent(): { names: string[]; stop: () => void } {
      const names: string[] = [];
      const original = redis.eval.bind(redis);
      const byScript = new Map<unknown, string>([
        [APPEND_SCRIPT, 'append'],
        [LEDGER_RECORD_SCRIPT, 'records'],
      ]);
      (redis as unknown as { eval: (...args: unknown[]) => unknown }).eval = (...args: unknown[]) => {
        const name = byScript.get(args[0]) ?? 'other';
        names.push(name === 'records' ? `records ×${args.length - 11}` : name);
        return (original as (...a: unknown[]) => unknown)(...args);
      };
      return { names, stop: () => delete (redis as unknown as { eval?: unknown }).eval };
    }

    it('the starts of one turn of the event loop go in one script; outcomes the step\'s append overtakes are not sent', async () => {
      const writer = context();
      await writer.append(user('go'));
      const sent = scriptsSent();
      try {
        await Promise.all([writer.recordStart(start(0)), writer.recordStart(start(1))]);
        expect(await redis.lrange(keys.ledger, 0, -1)).to.have.length(2);
        void writer.recordOutcome({ type: 'outcome', key: 'acme/s1/turn-1/1', index: 0, result: ok('c1', 'one') });
        void writer.recordOutcome({ type: 'outcome', key: 'acme/s1/turn-1/1', index: 1, result: ok('c2', 'two') });
        await writer.append(writer.openStep!.message, { role: 'tool', content: [textPart('one')], toolCallId: 'c1' }, { role: 'tool', content: [textPart('two')], toolCallId: 'c2' });
        await writer.flush();
        expect(sent.names).to.deep.equal(['records ×2', 'append']);
      } finally {
        sent.stop();
      }
      expect(await redis.exists(keys.ledger)).to.equal(0);
      expect(await redis.llen(keys.history)).to.equal(4);
      // Outcomes of calls still running when the chunk's turn of the event loop ends are sent on their own.
      await writer.recordStart({ ...start(0), key: 'acme/s1/turn-1/2' });
      await writer.recordOutcome({ type: 'outcome', key: 'acme/s1/turn-1/2', index: 0, result: ok('c1', 'one') });
      expect(await redis.llen(keys.ledger)).to.equal(2);
    });

    it('the append that closes a recorded step resolves before Redis answers; when Redis refuses it, every later write, flush() and close() fail with its error', async () => {
      const first = (await SessionLease.acquire(redis, keys, 60_000, () => undefined))!;
      const writer = context({ fence: first.token });
      await writer.append(user('go'));
      await writer.recordStart(start(0));
      await redis.del(keys.owner); // the lease lapses while the call runs; another worker takes the session over
      const second = (await SessionLease.acquire(redis, keys, 60_000, () => undefined))!;
      const step: Message[] = [writer.openStep!.message, { role: 'tool', content: [textPart('one')], toolCallId: 'c1' }];
      await writer.append(...step); // resolved: the messages are in memory, the script on its way
      expect(writer.history).to.have.length(3);
      expect(await writer.flush().catch((e: unknown) => e)).to.satisfy(FencedError.isInstance);
      expect(await writer.append(user('more')).catch((e: unknown) => e)).to.satisfy(FencedError.isInstance);
      expect(await writer.recordStart({ ...start(0), key: 'acme/s1/turn-1/2' }).catch((e: unknown) => e)).to.satisfy(FencedError.isInstance);
      expect(await writer.close().catch((e: unknown) => e)).to.satisfy(FencedError.isInstance);
      expect(await redis.llen(keys.history), 'the zombie wrote nothing after the takeover').to.equal(1);
      const restored = context();
      await restored.restore();
      expect(restored.openStep?.key, 'the stored ledger still holds the step').to.equal('acme/s1/turn-1/1');
      await second.release();
    });

    it("an agent's turn fails when its last step's append is refused after it resolved (a turn that stops at maxSteps)", async () => {
      const first = (await SessionLease.acquire(redis, keys, 60_000, () => undefined))!;
      const writer = context({ fence: first.token });
      let second: SessionLease | undefined;
      const toolset: Toolset = {
        tools: [{ name: 'mark', description: '', parameters: { type: 'object' } }],
        async handle(c) {
          await redis.del(keys.owner); // taken over while the call runs
          second = (await SessionLease.acquire(redis, keys, 60_000, () => undefined))!;
          return { toolCallId: c.id, returnValue: { isError: false, output: 'marked', message: '', display: [] } };
        },
      };
      const plan = planInput({ label: 'f', steps: [[{ tool: 'mark', args: { mark: 'f-1' } }]] });
      const agent = new Agent({ systemPrompt: '', context: writer, maxSteps: 1, step: (options) => step({ ...options, provider: new PlanProvider(), toolset }) });
      const error = await agent.run(plan, { turn: { id: 'turn-1' } }).catch((e: unknown) => e);
      expect(error).to.satisfy(FencedError.isInstance);
      await second?.release();
    });
  });

  describe('claim()', () => {
    it('one claim at a time: a second copy is refused with ResumeConflictError until the first is released', async () => {
      const [a, b] = [context(), context()];
      await Promise.all([a.restore(), b.restore()]);
      const release = await a.claim();
      const refused = await b.claim().catch((e: unknown) => e);
      expect(refused).to.satisfy(ResumeConflictError.isInstance);
      expect((refused as Error).message).to.match(/another process holds the session/);
      await release();
      await (await b.claim())();
    });

    it('a copy that missed a write cannot claim: the session changed since it read it', async () => {
      const [a, b] = [context(), context()];
      await Promise.all([a.restore(), b.restore()]);
      await a.append(user('first'));
      const refused = await b.claim().catch((e: unknown) => e);
      expect(refused).to.satisfy(ResumeConflictError.isInstance);
      expect((refused as Error).message).to.match(/wrote to the session since this context read it/);
    });

    it('writes under the claim are fenced by it: once it is lost, they are refused', async () => {
      const a = context();
      const release = await a.claim();
      await a.append(user('under the claim'));
      await redis.del(keys.owner); // the claim lapses (the process froze past its time to live)
      const other = (await SessionLease.acquire(redis, keys, 60_000, () => undefined))!;
      expect(await a.append(user('zombie')).catch((e: unknown) => e)).to.satisfy(FencedError.isInstance);
      await release(); // leaves the other's lease alone
      expect(await redis.get(keys.owner)).to.equal(String(other.token));
      await other.release();
    });

    it('a context with a fence (under a lease) claims at once', async () => {
      await (await context({ fence: 7 }).claim())();
      expect(await redis.exists(keys.owner)).to.equal(0);
    });
  });

  it("an agent on a copy restored after a step was cut short completes it from the ledger: a 'never' call is not run again", async () => {
    const file = join(dir, `${prefix}.log`);
    const toolset = new MarkerToolset(file);
    // Both calls still run when the step is cut short (the safe one runs again, 1.5 s, after it).
    const plan = planInput({ label: 'p', steps: [[{ tool: 'mark_safe', args: { mark: 'p-1', ms: 1_500 } }, { tool: 'mark', args: { mark: 'p-2', ms: 60_000 } }]] });
    const stepWith = (ts: Toolset) => (options: Parameters<typeof step>[0] extends infer O ? Omit<O, 'provider' | 'toolset'> : never) => step({ ...options, provider: new PlanProvider(), toolset: ts });
    const controller = new AbortController();
    const first = new Agent({ systemPrompt: '', context: context(), step: stepWith(toolset) });
    const running = first.run(plan, { signal: controller.signal, turn: { id: 'turn-1' } }).catch((e: unknown) => e);
    await until(() => markerCounts(file).get('p-1') === 1 && markerCounts(file).get('p-2') === 1, 10_000, 'both calls to run');
    controller.abort(new Error('the process stops')); // as a crash would, nothing of the step reaches the history
    await running;

    const restored = context();
    await restored.restore();
    expect(restored.openStep?.key).to.equal('acme/s1/turn-1/1');
    const second = new Agent({ systemPrompt: '', context: restored, step: stepWith(toolset) });
    const result = await second.run([], { turn: { id: 'turn-1' } });
    expect(result.stopReason).to.equal('no_tool_calls');
    expect(markerCounts(file).get('p-1'), "the 'safe' call ran again").to.equal(2);
    expect(markerCounts(file).get('p-2'), "the 'never' call ran once").to.equal(1);
    expect(restored.history.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'tool', 'tool', 'assistant']);
    const tools = restored.history.filter((m) => m.role === 'tool');
    expect(JSON.stringify(tools[0]!.content)).to.include('marked p-1');
    expect(JSON.stringify(tools[1]!.content)).to.match(/Tool call was interrupted/);
  });

  it('remote tools: replay policies come with the published tool list, and the idempotency key reaches the tool and names the job', async () => {
    const seen: (string | undefined)[] = [];
    const toolset: Toolset = {
      tools: [
        { name: 'read', description: '', parameters: { type: 'object' } },
        { name: 'pay', description: '', parameters: { type: 'object' } },
        { name: 'mail', description: '', parameters: { type: 'object' } },
      ],
      replayPolicy: (c) => (c.function.name === 'read' ? 'safe' : 'never'),
      handle: (c, ctx) => {
        seen.push(ctx.idempotencyKey);
        return { toolCallId: c.id, returnValue: { isError: false, output: 'done', message: '', display: [] } };
      },
    };
    const worker = await ToolWorker.start({ connection: server.url, toolset, name: 'policies', prefix, replay: { mail: 'ask' } });
    closers.push(() => worker.close({ deadlineMs: 500 }));
    const remote = await RemoteToolset.connect({ connection: server.url, name: 'policies', prefix });
    closers.push(() => remote.close());
    expect(['read', 'pay', 'mail', 'unknown'].map((name) => remote.replayPolicy(call('c', name)))).to.deep.equal(['safe', 'never', 'ask', 'never']);
    const overridden = await RemoteToolset.connect({ connection: server.url, name: 'policies', prefix, replay: { pay: 'safe' } });
    closers.push(() => overridden.close());
    expect(overridden.replayPolicy(call('c', 'pay'))).to.equal('safe');

    const theCall = call('c1', 'pay');
    const context = { signal: new AbortController().signal, toolCall: theCall, stepId: 'step-x', index: 0, idempotencyKey: 'acme/s1/turn-1/1/0' };
    await remote.handle(theCall, context);
    // The same call again (its step done again, with a new step id): the job of its first run answers.
    const again = await remote.handle(theCall, { ...context, stepId: 'step-y' });
    expect(again.returnValue.output).to.equal('done');
    expect(seen).to.deep.equal(['acme/s1/turn-1/1/0']);
    expect(await redis.exists(`${prefix}:${remote.queueName}:k.acme%2Fs1%2Fturn-1%2F1%2F0`)).to.equal(1);
  });
});
