/**
 * A `RedisContext` sends its writes without waiting for the replies of those before. When the
 * connection drops after Redis applied several of them but before their replies came back, ioredis
 * sends them all again on the new connection. Each must answer `APPLIED` — not only the last one:
 * the earlier ones would otherwise find their own effects (`STALE`) and fail the context. The drop
 * is made by a proxy between the context and a real Redis that swallows replies, then cuts the
 * connection.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { textPart, toolCall, type Message } from '@kosong/core';
import type { CallStartRecord } from '@kosong/core/context-kit';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { RedisContext, SessionKeys } from '../index.js';
import { RedisServer } from '../testing/redis-server.js';
import { testPrefix, until } from './support.js';

/** A TCP proxy to Redis that can swallow the replies (`dropping`) and cut every connection (`cut`). */
class ReplyDroppingProxy {
  dropping = false;
  url = '';
  readonly #pairs = new Set<[Socket, Socket]>();
  readonly #server: Server;

  private constructor(target: URL) {
    this.#server = createServer((client) => {
      const upstream = createConnection({ host: target.hostname, port: Number(target.port) });
      const pair: [Socket, Socket] = [client, upstream];
      this.#pairs.add(pair);
      client.on('data', (data) => upstream.write(data));
      upstream.on('data', (data) => {
        if (!this.dropping) client.write(data);
      });
      const close = (): void => {
        this.#pairs.delete(pair);
        client.destroy();
        upstream.destroy();
      };
      client.on('close', close).on('error', close);
      upstream.on('close', close).on('error', close);
    });
  }

  static async start(target: URL): Promise<ReplyDroppingProxy> {
    const proxy = new ReplyDroppingProxy(target);
    await new Promise<void>((resolve) => proxy.#server.listen(0, '127.0.0.1', resolve));
    proxy.url = `redis://127.0.0.1:${(proxy.#server.address() as { port: number }).port}`;
    return proxy;
  }

  /** Drops every connection (replies swallowed so far never arrive); new ones go through. */
  cut(): void {
    this.dropping = false;
    for (const [client, upstream] of this.#pairs) {
      client.destroy();
      upstream.destroy();
    }
  }

  async stop(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

const user = (text: string): Message => ({ role: 'user', content: [textPart(text)] });
const calls = [toolCall('c1', 'mark', '{"mark":"m1"}')];
const startOf = (step: number): CallStartRecord => ({ type: 'start', key: `acme/s1/turn-1/${step}`, index: 0, contentFrom: 0, content: [textPart('calling')], callsFrom: 0, toolCalls: calls });

describe('writes in flight when the connection drops (real Redis behind a proxy)', function () {
  this.timeout(30_000);
  let server: RedisServer;
  let proxy: ReplyDroppingProxy;
  let admin: Redis;

  before(async () => {
    server = await RedisServer.start();
    admin = new Redis(server.url);
  });
  after(async () => {
    admin.disconnect();
    await server.stop();
  });
  beforeEach(async () => {
    proxy = await ReplyDroppingProxy.start(new URL(server.url));
  });
  afterEach(async () => {
    await proxy.stop();
  });

  it('a step\u2019s append and the next step\u2019s first record, both applied and resent together, are each applied once and the context goes on', async () => {
    const prefix = testPrefix();
    const keys = new SessionKeys(prefix, 'acme', 's1');
    const context = new RedisContext({ connection: proxy.url, tenant: 'acme', session: 's1', prefix });
    try {
      await context.append(user('go'));
      await context.recordStart(startOf(1));
      proxy.dropping = true;
      // The append closing the recorded step resolves once sent; the next step's record is sent right behind it.
      const assistant: Message = { role: 'assistant', content: [textPart('calling')], toolCalls: calls };
      const result: Message = { role: 'tool', toolCallId: 'c1', content: [textPart('marked m1')] };
      await context.append(assistant, result);
      const recorded = context.recordStart(startOf(2));
      await until(async () => (await admin.llen(keys.history)) === 3 && (await admin.llen(keys.ledger)) === 1, 10_000, 'Redis to apply both writes');
      proxy.cut(); // their replies are lost: ioredis sends both again on a new connection
      await recorded;
      await context.flush();
      expect(await admin.llen(keys.history), 'the messages once').to.equal(3);
      expect(await admin.llen(keys.ledger), 'the record once').to.equal(1);
      await context.append({ role: 'assistant', content: [textPart('done')] });
      await context.flush(); // that append closes step 2's records: it resolved once sent
      expect(await admin.llen(keys.history), 'and the context goes on').to.equal(4);
    } finally {
      await context.close();
    }
  });
});
