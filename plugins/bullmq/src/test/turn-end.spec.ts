/**
 * A turn's end, as its readers see it (real Redis). A reader waits for the terminal event on the
 * turn's stream; the worker publishes it, then marks the turn ended. A Redis restart could cut that
 * publish off while the state still said "done" (seen in ledger-redis-restart.spec.ts: a turn done,
 * its stream ending with a part, its submitter waiting for ever). Now the finish script writes the
 * event with the state when the stream does not end with one, and a reader of a stream left so by an
 * older version ends with the stored result instead of waiting.
 */
import { textPart } from '@kosong/core';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { SessionKeys, TurnQueue } from '../index.js';
import { finishTurn } from '../turn-job.js';
import type { QueuedTurnResult, TerminalTurnEvent } from '../turn-events.js';
import { RedisServer } from '../testing/redis-server.js';
import { testPrefix } from './support.js';

const result = { message: { role: 'assistant', content: [textPart('done')] }, steps: 1, stopReason: 'no_tool_calls' } as unknown as QueuedTurnResult;

describe('the end of a turn on its stream (real Redis)', function () {
  this.timeout(20_000);
  let server: RedisServer;
  let redis: Redis;
  let prefix: string;
  let keys: SessionKeys;

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
    keys = new SessionKeys(prefix, 'acme', 's1');
  });

  const events = async (turnId: string): Promise<string[]> =>
    ((await redis.xrange(keys.events(turnId), '-', '+')) as [string, string[]][]).map(([, fields]) => (JSON.parse(fields[1]!) as { type: string }).type);

  it('finishTurn writes the terminal event when the stream does not end with one, and only then', async () => {
    await redis.xadd(keys.events('t1'), '*', 'e', JSON.stringify({ type: 'part', step: 1 }));
    const end: TerminalTurnEvent = { type: 'turn_end', result };
    await finishTurn(redis, keys, 't1', end);
    expect(await events('t1')).to.deep.equal(['part', 'turn_end']);
    expect(await redis.hget(keys.turn('t1'), 'state')).to.equal('done');
    // Published already (the usual path): not written twice; finishing again changes nothing either.
    await redis.xadd(keys.events('t2'), '*', 'e', JSON.stringify({ type: 'part', step: 1 }), 'MAXLEN', '10');
    await redis.xadd(keys.events('t2'), '*', 'e', JSON.stringify({ type: 'turn_failed', error: { name: 'E', message: 'm' } }));
    await finishTurn(redis, keys, 't2', { type: 'turn_failed', error: { name: 'E', message: 'm' } });
    await finishTurn(redis, keys, 't2', { type: 'turn_failed', error: { name: 'E', message: 'm' } });
    expect(await events('t2')).to.deep.equal(['part', 'turn_failed']);
    // No stream at all (a turn cancelled while queued): the event is its only entry, kept as long as the state.
    await finishTurn(redis, keys, 't3', { type: 'turn_cancelled', reason: 'no' });
    expect(await events('t3')).to.deep.equal(['turn_cancelled']);
    expect(await redis.ttl(keys.events('t3'))).to.be.greaterThan(0);
  });

  it('a reader of a turn marked done whose stream lacks the terminal event gets the stored result, and does not wait for ever', async () => {
    await redis.xadd(keys.events('t4'), '*', 'e', JSON.stringify({ type: 'part', step: 1, part: textPart('d') }));
    await redis.hset(keys.turn('t4'), 'state', 'done', 'result', JSON.stringify(result));
    const turns = new TurnQueue({ connection: server.url, prefix });
    try {
      const handle = turns.handle('t4', 'acme', 's1');
      expect(await handle.result()).to.deep.equal(result);
      const seen: string[] = [];
      for await (const event of handle.events()) seen.push(event.type);
      expect(seen).to.deep.equal(['part', 'turn_end']);
      // Failed the same way: the stored event is the end.
      await redis.hset(keys.turn('t5'), 'state', 'failed', 'result', JSON.stringify({ type: 'turn_failed', error: { name: 'TurnFailedError', message: 'broke' } }));
      const failed = await turns.handle('t5', 'acme', 's1').result().catch((error: unknown) => error);
      expect((failed as Error).message).to.match(/broke/);
    } finally {
      await turns.close();
    }
  });
});
