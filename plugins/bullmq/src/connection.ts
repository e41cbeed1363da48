import { Redis, type RedisOptions } from 'ioredis';

/** How to reach Redis: a URL (`redis://127.0.0.1:6379/0`), ioredis options, or a client of yours (never closed here). */
export type RedisConnection = string | RedisOptions | Redis;

/**
 * A client for this package, from what the user gave. A client of the user's is duplicated (it stays
 * theirs and is never closed here). `blocking`: for BullMQ workers and blocking reads, whose commands
 * must wait through a reconnect (`maxRetriesPerRequest: null`); other clients fail a command after a
 * few reconnection attempts, so callers get an error instead of hanging while Redis is away.
 * @internal
 */
export function createRedis(connection: RedisConnection, purpose: { readonly blocking: boolean; readonly name?: string }): Redis {
  const tuning: RedisOptions = {
    maxRetriesPerRequest: purpose.blocking ? null : 3,
    enableReadyCheck: true,
    retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 6), 2_000),
    ...(purpose.name ? { connectionName: purpose.name } : {}),
  };
  const client =
    connection instanceof Redis ? connection.duplicate(tuning) : typeof connection === 'string' ? new Redis(connection, tuning) : new Redis({ ...connection, ...tuning });
  // Connection errors surface through the commands that fail (and ioredis reconnects); an
  // 'error' event without a listener would only print them.
  client.on('error', () => undefined);
  return client;
}

/** Closes a client this package created; never throws (a client already gone is fine). @internal */
export async function closeRedis(client: Redis): Promise<void> {
  if (client.status === 'end') return;
  if (client.status !== 'ready') {
    client.disconnect(); // not connected: quitting would wait for a reconnection
    return;
  }
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([client.quit(), new Promise((resolve) => (timer = setTimeout(resolve, 2_000)))]);
  } catch {
    // gone already
  } finally {
    clearTimeout(timer);
    client.disconnect();
  }
}

/** Runs a BullMQ `close()`, giving up after `ms` (it waits for Redis, which may be away). @internal */
export async function closeWithin(close: () => Promise<unknown>, ms = 2_000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([close().catch(() => undefined), new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
