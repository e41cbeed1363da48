import { Redis, type RedisOptions } from 'ioredis';
import { RedisUnavailableError } from './errors.js';

/** How to reach Redis: a URL (`redis://127.0.0.1:6379/0`), ioredis options, or a client of yours (never closed here). */
export type RedisConnection = string | RedisOptions | Redis;

/** How long the non-blocking clients of this package wait for Redis to come back, by default (ms). */
export const DEFAULT_RECONNECT_WINDOW_MS = 15_000;

/** The wait before reconnection attempt `times` (from 1): 100 ms doubling to 1 s. */
function reconnectDelayMs(times: number): number {
  return Math.min(50 * 2 ** Math.min(times, 5), 1_000);
}

/**
 * How many reconnection attempts span `windowMs`: ioredis fails the commands it holds after that
 * many attempts (its `maxRetriesPerRequest`), counted from the moment the connection was lost.
 */
/** @internal */
export function attemptsWithin(windowMs: number): number {
  let attempts = 0;
  for (let waited = 0; waited < windowMs; waited += reconnectDelayMs(attempts)) attempts++;
  return Math.max(1, attempts);
}

/** What a client of this package is for. @internal */
export interface ClientPurpose {
  /**
   * For BullMQ workers and blocking reads, whose commands must wait through a reconnect however
   * long it takes (`maxRetriesPerRequest: null`).
   */
  readonly blocking: boolean;
  readonly name?: string;
  /**
   * For the other clients: how long their commands wait while Redis is unreachable (they are sent
   * once it is back) before they fail, so that a caller gets an error ({@link isRedisUnavailable})
   * instead of hanging. Default {@link DEFAULT_RECONNECT_WINDOW_MS}.
   */
  readonly reconnectWindowMs?: number;
  /**
   * For the other clients: how long any one command may go without a reply before it fails (ms;
   * default its `reconnectWindowMs`), counted from when it is issued, whether Redis is away or frozen
   * (SIGSTOP, a stalled host: the connection stays open and silent). A command that times out may
   * still be applied once Redis answers again: the scripts of this package are whole, and fenced.
   */
  readonly commandTimeoutMs?: number;
}

/**
 * A client for this package, from what the user gave. A client of the user's is duplicated (it stays
 * theirs and is never closed here). Every client reconnects for ever; a non-blocking one fails the
 * commands it holds once Redis has been unreachable for its reconnect window (then takes new ones
 * for another window), and fails any command that had no reply within its window (a frozen Redis).
 * Commands sent when the connection dropped are sent again once it is back:
 * the scripts of this package recognise a write they already applied (see `WRITE_CHECKS`).
 * @internal
 */
export function createRedis(connection: RedisConnection, purpose: ClientPurpose): Redis {
  const tuning: RedisOptions = {
    maxRetriesPerRequest: purpose.blocking ? null : attemptsWithin(purpose.reconnectWindowMs ?? DEFAULT_RECONNECT_WINDOW_MS),
    // A frozen Redis keeps its connections open: without a deadline of their own, commands would wait for ever.
    ...(purpose.blocking ? {} : { commandTimeout: purpose.commandTimeoutMs ?? purpose.reconnectWindowMs ?? DEFAULT_RECONNECT_WINDOW_MS }),
    enableReadyCheck: true,
    retryStrategy: reconnectDelayMs,
    ...(purpose.name ? { connectionName: purpose.name } : {}),
  };
  const client =
    connection instanceof Redis ? connection.duplicate(tuning) : typeof connection === 'string' ? new Redis(connection, tuning) : new Redis({ ...connection, ...tuning });
  // Connection errors surface through the commands that fail (and ioredis reconnects); an
  // 'error' event without a listener would only print them.
  client.on('error', () => undefined);
  return client;
}

/** Messages of the errors a command gets when Redis cannot be reached (ioredis' own, and the socket's). */
const UNREACHABLE = /max retries per request|Command timed out|Connection is closed|Stream isn't writeable|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENOTFOUND|EAI_AGAIN/;

/**
 * Whether a command failed because Redis could not be reached (past the client's reconnect window,
 * frozen past its command timeout, or the client was closed), rather than because Redis refused it.
 */
export function isRedisUnavailable(error: unknown): boolean {
  if (RedisUnavailableError.isInstance(error)) return true;
  if (!(error instanceof Error)) return false;
  return error.name === 'MaxRetriesPerRequestError' || UNREACHABLE.test(error.message);
}

/**
 * `error` as this package reports it: a {@link RedisUnavailableError} (saying what could not be
 * done) when Redis could not be reached, else `error` itself.
 */
export function asUnavailable(error: unknown, doing: string): unknown {
  if (!isRedisUnavailable(error) || RedisUnavailableError.isInstance(error)) return error;
  return new RedisUnavailableError(`${doing}: Redis is unreachable (${(error as Error).message})`, { cause: error });
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
