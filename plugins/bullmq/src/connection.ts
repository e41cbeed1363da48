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
    dropClient(client); // not connected: quitting would wait for a reconnection
    return;
  }
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([client.quit(), new Promise((resolve) => (timer = setTimeout(resolve, 2_000)))]);
  } catch {
    // gone already
  } finally {
    clearTimeout(timer);
    dropClient(client);
  }
}

/**
 * Runs a BullMQ `close()`, giving up after `ms` (it waits for Redis, which may be away). Resolves
 * whether it closed in time. @internal
 */
export async function closeWithin(close: () => Promise<unknown>, ms = 2_000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const closed = await Promise.race([
    close().then(
      () => true,
      () => true, // a failed close has nothing left to wait for
    ),
    new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms))),
  ]);
  clearTimeout(timer);
  return closed;
}

/** What {@link closeOrDisconnect} closes: a BullMQ `Queue`, `QueueEvents` or `Worker`. @internal */
export interface BullmqCloseable {
  close(): Promise<unknown>;
  getBackend(): unknown;
}

/**
 * Closes a BullMQ object within `ms`. If it did not close in time (Redis is away: BullMQ's close
 * waits for its clients to end, and a client disconnected while reconnecting never does, see
 * {@link dropClient}), drops its Redis clients, which lets the close finish; otherwise its timers
 * (lock renewal, stalled-job checks) would keep the process alive for ever. Never throws. @internal
 */
export async function closeOrDisconnect(closeable: BullmqCloseable, ms = 2_000): Promise<void> {
  if (await closeWithin(() => closeable.close(), ms)) return;
  // The Redis backend's documented escape hatches: its raw clients (promises).
  const backend = closeable.getBackend() as { readonly client?: Promise<unknown>; readonly blockingClient?: Promise<unknown> };
  for (const pending of [backend.client, backend.blockingClient]) {
    let timer: NodeJS.Timeout | undefined;
    const client = await Promise.race([
      Promise.resolve(pending).catch(() => undefined),
      new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), 500))),
    ]);
    clearTimeout(timer);
    if (isDroppable(client)) dropClient(client);
  }
  await closeWithin(() => closeable.close(), 2_000);
}

/** An ioredis client, or BullMQ's proxy of one. */
interface DroppableClient {
  readonly status: string;
  disconnect(): void;
  connect(): Promise<unknown>;
}

function isDroppable(value: unknown): value is DroppableClient {
  const client = value as Partial<DroppableClient> | undefined;
  return typeof client?.status === 'string' && typeof client.disconnect === 'function' && typeof client.connect === 'function';
}

/**
 * Disconnects a client at once, failing the commands it still holds. ioredis leaves a client
 * disconnected between two reconnection attempts "reconnecting" for ever: it never emits `end`, and
 * the commands it queued meanwhile never settle (redis/ioredis#2169). One more attempt ends the
 * client either way: a failed one ends it and fails the commands, a successful one sends them
 * before the client is disconnected.
 */
function dropClient(client: DroppableClient): void {
  if (client.status === 'end') return;
  client.disconnect();
  if (client.status === 'reconnecting') {
    client.connect().then(
      () => client.disconnect(),
      () => undefined,
    );
  }
}
