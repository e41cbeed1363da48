import { Agent, step, textPart, toolCall, toolOk, type Message, type Toolset } from '@kosong/core';
import { MockChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { FencedError, RedisContext, SessionKeys, SessionLease } from '../index.js';
import { RedisServer } from '../testing/redis-server.js';
import { sleep, testPrefix } from './support.js';

const user = (text: string): Message => ({ role: 'user', content: [textPart(text)] });
const assistant = (text: string): Message => ({ role: 'assistant', content: [textPart(text)] });

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
});
