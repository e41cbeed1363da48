import { Agent, step, textPart, toolCall, toolOk, type Message, type StreamedMessagePart, type Toolset } from '@kosong/core';
import { MockChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { FencedError, RedisContext, SessionKeys, SessionLease } from '../index.js';
import { RedisServer } from '../testing/redis-server.js';
import { sleep, testPrefix } from './support.js';

const user = (text: string): Message => ({ role: 'user', content: [textPart(text)] });
const assistant = (text: string): Message => ({ role: 'assistant', content: [textPart(text)] });

/** A tool call for a user message, an answer for a tool result. */
const replies = (history: readonly Message[]): readonly StreamedMessagePart[] =>
  history.at(-1)?.role === 'tool' ? [textPart('done '.repeat(20))] : [textPart('calling'), toolCall(`c${history.length}`, 'echo', JSON.stringify({ text: 'x'.repeat(120) }))];

const echoLong: Toolset = {
  tools: [{ name: 'echo', description: '', parameters: {} }],
  handle: (call) => ({ toolCallId: call.id, returnValue: toolOk({ output: `echoed ${'y'.repeat(120)}` }) }),
};

describe('RedisContext (real Redis)', function () {
  this.timeout(20_000);
  let server: RedisServer;
  let redis: Redis;
  let prefix: string;

  before(async () => {
    server = await RedisServer.start();
    redis = new Redis(server.url);
  });
  after(async () => {
    redis.disconnect();
    await server.stop();
  });
  beforeEach(() => {
    prefix = testPrefix();
  });

  const context = (extra: Partial<ConstructorParameters<typeof RedisContext>[0]> = {}): RedisContext =>
    new RedisContext({ connection: redis, tenant: 'acme', session: 's1', prefix, ...extra });

  it('stores what an agent appends, and restores it elsewhere', async () => {
    const echo: Toolset = {
      tools: [{ name: 'echo', description: '', parameters: {} }],
      handle: (call) => ({ toolCallId: call.id, returnValue: toolOk({ output: 'echoed' }) }),
    };
    const turns = [[textPart('calling'), toolCall('c1', 'echo', '{}')], [textPart('done')]];
    let calls = 0;
    const agent = new Agent({ systemPrompt: '', context: context(), step: (o) => step({ ...o, provider: new MockChatProvider(turns[calls++]!), toolset: echo }) });
    await agent.run('hello');
    const restored = context();
    expect(await restored.restore()).to.deep.equal({ messages: 4 });
    expect(restored.history).to.deep.equal(agent.context.history);
    expect(restored.history.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'tool', 'assistant']);
    expect(await redis.llen(new SessionKeys(prefix, 'acme', 's1').history)).to.equal(4);
  });

  it('keeps tenants and sessions apart', async () => {
    await context().append(user('acme s1'));
    await context({ tenant: 'globex' }).append(user('globex s1'));
    await context({ session: 's2' }).append(user('acme s2'));
    const acme = context();
    await acme.restore();
    expect(acme.history).to.deep.equal([user('acme s1')]);
  });

  it('refuses an append from a copy that is not up to date: nothing is written', async () => {
    const [a, b] = [context(), context()];
    await a.restore();
    await b.restore();
    await a.append(user('first'));
    const error = await b.append(user('interleaved'), assistant('half')).catch((e: unknown) => e);
    expect((error as Error).message).to.match(/another writer appended/);
    expect(b.history).to.deep.equal([]);
    const fresh = context();
    await fresh.restore();
    expect(fresh.history).to.deep.equal([user('first')]);
  });

  it('fences a writer whose lease expired: a zombie cannot write after a takeover', async () => {
    const keys = new SessionKeys(prefix, 'acme', 's1');
    let lost = false;
    const first = (await SessionLease.acquire(redis, keys, 60_000, () => void (lost = true)))!;
    expect(await SessionLease.acquire(redis, keys, 60_000, () => undefined), 'the session is held').to.equal(undefined);
    const zombie = context({ fence: first.token });
    await zombie.append(user('before'));

    await redis.del(keys.owner); // the lease lapses (the worker froze past its time to live)
    const second = (await SessionLease.acquire(redis, keys, 60_000, () => undefined))!;
    expect(second.token).to.be.greaterThan(first.token);
    const successor = context({ fence: second.token });
    await successor.restore();

    const refused = await zombie.append(assistant('zombie step'), user('more')).catch((e: unknown) => e);
    expect(FencedError.isInstance(refused)).to.equal(true);
    expect(await zombie.markTokenCount(99).catch((e: unknown) => e)).to.satisfy(FencedError.isInstance);
    await successor.append(assistant('successor step'));
    const check = context();
    await check.restore();
    expect(check.history).to.deep.equal([user('before'), assistant('successor step')]);
    expect(check.tokenCount).to.equal(0);

    await sleep(10);
    expect(lost).to.equal(false); // (renewal runs every 20 s here; the takeover is seen by the fence, not the timer)
    await first.release(); // not ours any more: leaves the successor's lease alone
    expect(await redis.get(keys.owner)).to.equal(String(second.token));
    await second.release();
    expect(await redis.exists(keys.owner)).to.equal(0);
  });

  it('a lease that cannot be renewed is reported lost', async () => {
    const keys = new SessionKeys(prefix, 'acme', 's1');
    let lost = false;
    const lease = (await SessionLease.acquire(redis, keys, 150, () => void (lost = true)))!;
    await redis.set(keys.owner, 'someone else');
    await sleep(200);
    expect(lost).to.equal(true);
    expect(lease.lost).to.equal(true);
    await lease.release();
  });

  it('records the running turn with each append: input first, then one step per append, with its usage', async () => {
    let usage = { inputOther: 0, output: 0 };
    const turnContext = context({ turn: { id: 'turn-1', usage: () => usage } });
    await turnContext.append(user('question'));
    expect(await turnContext.turnProgress()).to.deep.include({ turn: 'turn-1', steps: 0 });
    usage = { inputOther: 10, output: 5 };
    await turnContext.append(assistant('step 1'));
    usage = { inputOther: 30, output: 9 };
    await turnContext.append(assistant('step 2'));
    expect(await turnContext.turnProgress()).to.deep.equal({ turn: 'turn-1', steps: 2, usage: { inputOther: 30, output: 9 } });
  });

  it('fails to restore a session holding something that is not a message, naming it', async () => {
    const keys = new SessionKeys(prefix, 'acme', 's1');
    await redis.rpush(keys.history, JSON.stringify({ role: 'user', content: 'ok' }), '{"role": 42}');
    const error = await context().restore().catch((e: unknown) => e);
    expect((error as Error).message).to.match(/message 2 in Redis is not a valid message/);
  });

  describe('compaction', () => {
    it("an agent's compactions are stored: a restored context has the compacted history, and Redis keeps every original message", async () => {
      const windowTokens = 1_000;
      let summaries = 0;
      const agent = new Agent({
        systemPrompt: '',
        context: context(),
        compaction: { windowTokens, summarizer: (messages) => Promise.resolve(`summary ${++summaries} of ${messages.length} messages`) },
        step: (options) => step({ ...options, provider: new MockChatProvider(replies(options.history)), toolset: echoLong }),
      });
      for (let turn = 0; turn < 120; turn++) await agent.run(`turn ${turn}`);
      expect(summaries, 'compactions').to.be.greaterThan(5);
      const restored = context();
      await restored.restore();
      expect(restored.history).to.deep.equal(agent.context.history);
      expect(JSON.stringify(restored.history[0]!.content)).to.include(`summary ${summaries} of`);
      const list = await redis.lrange(new SessionKeys(prefix, 'acme', 's1').history, 0, -1);
      expect(list.filter((entry) => entry.includes('"role":"_compaction"')), 'compaction records').to.have.length(summaries);
      expect(list.filter((entry) => entry.includes('"turn 0"')), 'the first user message, still in Redis').to.have.length(1);
      expect(list.length - summaries, 'every message ever appended').to.equal(120 * 4);
      // The restored context writes on where the list is: an append after it is accepted.
      await restored.append(user('after'));
      expect(await redis.llen(new SessionKeys(prefix, 'acme', 's1').history)).to.equal(list.length + 1);
    });

    it('a compaction from a copy that is not up to date is refused, and nothing is written', async () => {
      const a = context();
      for (let i = 0; i < 4; i++) await a.append(user(`m${i}`));
      const [b, c] = [context(), context()];
      await b.restore();
      await c.restore();
      await b.compact({ replaces: 2, summary: user('summary by b') });
      const error = await c.compact({ replaces: 2, summary: user('summary by c') }).catch((e: unknown) => e);
      expect(String(error)).to.match(/cannot compact: another writer appended/);
      const restored = context();
      await restored.restore();
      expect(restored.history).to.deep.equal([user('summary by b'), user('m2'), user('m3')]);
    });

    it('refuses a bad compaction: replaces out of range, a step waiting for approval, a step open in the ledger', async () => {
      const a = context();
      await a.append(user('one'));
      for (const replaces of [0, 2, 1.5, Number.NaN]) {
        expect(String(await a.compact({ replaces, summary: user('s') }).catch((e: unknown) => e))).to.match(/replaces must be between 1 and 1/);
      }
      await a.recordStart({ type: 'start', key: 'k', index: 0, contentFrom: 0, content: [], callsFrom: 0, toolCalls: [{ type: 'function', id: 'c', function: { name: 'echo', arguments: '{}' } }] });
      expect(String(await a.compact({ replaces: 1, summary: user('s') }).catch((e: unknown) => e))).to.match(/open in the call ledger/);
      // In Redis too: a writer that does not know of the open step is refused by the script.
      const b = context();
      await b.restore();
      expect(b.openStep).to.not.equal(undefined);
      const list = await redis.llen(new SessionKeys(prefix, 'acme', 's1').history);
      expect(list).to.equal(1);
    });

    it('a compaction record that replaces more messages than came before it is a corrupted session', async () => {
      const keys = new SessionKeys(prefix, 'acme', 's1');
      await redis.rpush(keys.history, JSON.stringify({ role: 'user', content: 'hi' }), JSON.stringify({ role: '_compaction', token_count: 0, replaces: 3, summary: { role: 'user', content: 's' } }));
      const error = await context().restore().catch((e: unknown) => e);
      expect(String(error)).to.match(/entry 2 of the history in Redis compacts 3 messages of a history of 1/);
    });
  });
});
