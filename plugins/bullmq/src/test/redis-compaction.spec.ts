import { Agent, step, textPart, toolCall, toolOk, type Message, type StreamedMessagePart, type Toolset } from '@kosong/core';
import { MockChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { RedisContext, SessionKeys } from '../index.js';
import { RedisServer } from '../testing/redis-server.js';
import { testPrefix } from './support.js';

const user = (text: string): Message => ({ role: 'user', content: [textPart(text)] });

/** A tool call for a user message, an answer for a tool result. */
const replies = (history: readonly Message[]): readonly StreamedMessagePart[] =>
  history.at(-1)?.role === 'tool' ? [textPart('done '.repeat(20))] : [textPart('calling'), toolCall(`c${history.length}`, 'echo', JSON.stringify({ text: 'x'.repeat(120) }))];

const echo: Toolset = {
  tools: [{ name: 'echo', description: '', parameters: {} }],
  handle: (call) => ({ toolCallId: call.id, returnValue: toolOk({ output: `echoed ${'y'.repeat(120)}` }) }),
};

describe('RedisContext compaction (real Redis)', function () {
  this.timeout(60_000);
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

  const context = (): RedisContext => new RedisContext({ connection: redis, tenant: 'acme', session: 's1', prefix });

  it("an agent's compactions are stored: a restored context has the compacted history, and Redis keeps every original message", async () => {
    const windowTokens = 1_000;
    let summaries = 0;
    const agent = new Agent({
      systemPrompt: '',
      context: context(),
      compaction: { windowTokens, summarizer: (messages) => Promise.resolve(`summary ${++summaries} of ${messages.length} messages`) },
      step: (options) => step({ ...options, provider: new MockChatProvider(replies(options.history)), toolset: echo }),
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
