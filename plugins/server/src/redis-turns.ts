import { randomUUID } from 'node:crypto';

import { checkKnownOptions, type KnownOptions } from '@kosong/core/kernel';
import type { Redis } from 'ioredis';

import { DEFAULT_REDIS_PREFIX, chatKeyName } from './redis-keys.js';
import type { SharedTurns, SharedTurnWriter } from './shared-turns.js';

/** Options of {@link redisTurns}. */
export interface RedisTurnsOptions {
  /** The prefix of every key and of the stop channel (default `kosong:server`). */
  readonly prefix?: string;
  /** How long a turn's stream is kept at most, in ms (default 3 600 000: an hour); renewed with every frame. */
  readonly turnTtlMs?: number;
  /**
   * How long a turn counts as running without a sign of its process, in ms (default 15 000,
   * renewed every third of it): a resume of a turn whose process died ends (with an error) within this.
   */
  readonly liveTtlMs?: number;
}

const REDIS_TURNS_OPTIONS: KnownOptions<RedisTurnsOptions> = { prefix: true, turnTtlMs: true, liveTtlMs: true };

/** How long an ended turn's stream stays, for the readers still following it. */
const ENDED_TTL_MS = 60_000;

/** Deletes KEYS[1] if it holds ARGV[1] (the live key of this turn, not of a turn begun since). */
const DELETE_IF = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

/** Why a resumed stream from Redis ended before the turn did. */
export class SharedTurnLostError extends Error {
  override readonly name = 'SharedTurnLostError';
}

/**
 * Running turns shared through Redis, for several server processes behind one address:
 *
 * - each turn's frames go to a Redis stream of its own (`<prefix>:{<tenant>/<chat>}:turn:<turn id>`,
 *   `XADD`, one entry per chunk, sent without waiting), with a TTL; `…:turn-live` names the turn
 *   running, renewed by its process: a resume that reaches another process reads its stream from the first entry,
 *   then follows it (`XREAD BLOCK`, on a connection of its own, `redis.duplicate()`) to the turn's
 *   end entry; one whose turn's process died (its `live` key expired) ends with an error;
 * - stops are published on `<prefix>:stop`: the process that runs the chat's turn aborts it.
 *
 * `redis` is an ioredis client of yours (never closed here); the subscriber and the readers are
 * duplicates of it, closed by `close()` (subscriber) and when each reader ends.
 *
 * @throws TypeError for an option it does not know, or a time that is no positive integer.
 */
export function redisTurns(redis: Redis, options: RedisTurnsOptions = {}): SharedTurns {
  checkKnownOptions('redisTurns', options, REDIS_TURNS_OPTIONS);
  if (typeof redis?.duplicate !== 'function') throw new TypeError('redisTurns: redis must be an ioredis client');
  for (const name of ['turnTtlMs', 'liveTtlMs'] as const) {
    const value = options[name];
    if (value !== undefined && (!Number.isSafeInteger(value) || value <= 0)) throw new TypeError(`redisTurns: ${name} must be a positive integer of ms, got ${String(value)}`);
  }
  return new RedisTurns(redis, options.prefix ?? DEFAULT_REDIS_PREFIX, options.turnTtlMs ?? 3_600_000, options.liveTtlMs ?? 15_000);
}

class RedisTurns implements SharedTurns {
  readonly #channel: string;
  #subscriber: Redis | undefined;
  readonly #listeners: ((tenant: string, chatId: string) => void)[] = [];
  readonly #readers = new Set<Redis>();
  #closed = false;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly turnTtlMs: number,
    private readonly liveTtlMs: number,
  ) {
    this.#channel = `${prefix}:stop`;
  }

  /** The live key of a chat (its value: the id of the turn running), and the stream of one of its turns. */
  #keys(tenant: string, chatId: string): { readonly live: string; readonly stream: (turn: string) => string } {
    const name = chatKeyName(this.prefix, tenant, chatId);
    return { live: `${name}:turn-live`, stream: (turn) => `${name}:turn:${turn}` };
  }

  begin(tenant: string, chatId: string): SharedTurnWriter {
    const keys = this.#keys(tenant, chatId);
    const turn = randomUUID();
    const stream = keys.stream(turn);
    const { live } = keys;
    const redis = this.redis;
    let state: 'open' | 'ended' | 'dropped' = 'open';
    const ignore = (): undefined => undefined; // a lost mirror write: a resume elsewhere then ends short of the turn (with an error), never here
    // Each turn has a stream of its own (a slow reader of the chat's last turn never reads this one's);
    // the live key names the turn running. Commands on one connection run in order.
    redis.set(live, turn, 'PX', this.liveTtlMs).catch(ignore);
    const heartbeat = setInterval(() => void redis.set(live, turn, 'PX', this.liveTtlMs).catch(ignore), Math.max(1, Math.floor(this.liveTtlMs / 3)));
    heartbeat.unref();
    return {
      write: (frame) => {
        if (state !== 'open') return;
        redis.multi().xadd(stream, '*', 'f', frame).pexpire(stream, this.turnTtlMs).exec().catch(ignore);
      },
      end: () => {
        if (state !== 'open') return;
        state = 'ended';
        clearInterval(heartbeat);
        redis.multi().xadd(stream, '*', 'end', '1').pexpire(stream, ENDED_TTL_MS).exec().catch(ignore);
        redis.eval(DELETE_IF, 1, live, turn).catch(ignore);
      },
      drop: () => {
        if (state === 'dropped') return;
        state = 'dropped';
        clearInterval(heartbeat);
        redis.del(stream).catch(ignore);
        redis.eval(DELETE_IF, 1, live, turn).catch(ignore);
      },
    };
  }

  async resume(tenant: string, chatId: string): Promise<ReadableStream<Uint8Array> | undefined> {
    const keys = this.#keys(tenant, chatId);
    const { live } = keys;
    const turn = this.#closed ? null : await this.redis.get(live);
    if (turn === null) return undefined;
    const stream = keys.stream(turn);
    const reader = this.redis.duplicate();
    this.#readers.add(reader);
    const done = (): void => {
      this.#readers.delete(reader);
      reader.disconnect();
    };
    const encoder = new TextEncoder();
    let lastId = '0';
    const blockMs = Math.max(1, Math.floor(this.liveTtlMs / 3));
    return new ReadableStream<Uint8Array>(
      {
        pull: async (controller) => {
          for (;;) {
            let reply: [string, [string, string[]][]][] | null;
            try {
              reply = (await reader.xread('COUNT', 256, 'BLOCK', blockMs, 'STREAMS', stream, lastId)) as typeof reply;
            } catch (error) {
              done();
              controller.error(error);
              return;
            }
            const entries = reply?.[0]?.[1] ?? [];
            if (entries.length === 0) {
              if ((await this.redis.get(live).catch(() => null)) === turn) continue; // running, quiet
              // Its live key is gone: the turn ended (its end entry came before) or its process died.
              const last = (await reader.xread('COUNT', 1, 'STREAMS', stream, lastId).catch(() => null)) as typeof reply;
              if ((last?.[0]?.[1] ?? []).length > 0) continue;
              done();
              controller.error(new SharedTurnLostError('The turn is no longer in Redis: its process stopped before its end, or it outgrew its bound'));
              return;
            }
            for (const [id, fields] of entries) {
              lastId = id;
              if (fields[0] === 'end') {
                done();
                controller.close();
                return;
              }
              if (fields[0] === 'f' && fields[1] !== undefined) controller.enqueue(encoder.encode(fields[1]));
            }
            return;
          }
        },
        cancel: () => done(),
      },
      { highWaterMark: 0 },
    );
  }

  async stop(tenant: string, chatId: string): Promise<boolean> {
    const { live } = this.#keys(tenant, chatId);
    const turn = await this.redis.get(live);
    if (turn === null) return false;
    await this.redis.publish(this.#channel, JSON.stringify([tenant, chatId]));
    // The stop returns once that turn has ended (its live key gone), or after the live key's TTL.
    const deadline = Date.now() + this.liveTtlMs;
    while ((await this.redis.get(live)) === turn && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    return true;
  }

  onStop(listener: (tenant: string, chatId: string) => void): void {
    this.#listeners.push(listener);
    if (this.#subscriber !== undefined || this.#closed) return;
    const subscriber = this.redis.duplicate();
    this.#subscriber = subscriber;
    subscriber.on('message', (channel: string, message: string) => {
      if (channel !== this.#channel) return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(message);
      } catch {
        return;
      }
      if (!Array.isArray(parsed) || typeof parsed[0] !== 'string' || typeof parsed[1] !== 'string') return;
      for (const each of this.#listeners) each(parsed[0], parsed[1]);
    });
    subscriber.subscribe(this.#channel).catch(() => undefined);
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#subscriber?.disconnect();
    this.#subscriber = undefined;
    for (const reader of this.#readers) reader.disconnect();
    this.#readers.clear();
  }
}
