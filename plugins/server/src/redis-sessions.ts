import { randomUUID } from 'node:crypto';

import { ApprovalPendingError, ResumeConflictError, messageFromJSON, messageToJSON, pendingApprovals, type AgentContext, type ContextRestoreReport, type Message, type PendingStep } from '@kosong/core';
import { pendingStepFromJSON, pendingStepToJSON } from '@kosong/core/context-kit';
import { checkKnownOptions, type KnownOptions } from '@kosong/core/kernel';
import type { Redis } from 'ioredis';

import { DEFAULT_REDIS_PREFIX, chatKeyName } from './redis-keys.js';
import { isValidChatId, type ChatSessions } from './sessions.js';

/** Options of {@link redisSessions}. */
export interface RedisSessionsOptions {
  /** The prefix of every key (default `kosong:server`). */
  readonly prefix?: string;
  /**
   * How long a turn's claim of a chat lasts without renewal, in ms (default 30 000, renewed every
   * third of it): a process killed mid-turn blocks its chat this long.
   */
  readonly claimTtlMs?: number;
}

const REDIS_SESSIONS_OPTIONS: KnownOptions<RedisSessionsOptions> = { prefix: true, claimTtlMs: true };

const DEFAULT_CLAIM_TTL_MS = 30_000;

/** Appends messages if the history has the expected length and no step is pending: the new length, -1 (pending), -2 (another writer). */
const APPEND = `
if redis.call('EXISTS', KEYS[2]) == 1 then return -1 end
if redis.call('LLEN', KEYS[1]) ~= tonumber(ARGV[1]) then return -2 end
return redis.call('RPUSH', KEYS[1], unpack(ARGV, 2))`;

/** Records a pending step (replacing one of the same id) if the history has the expected length: 1, -1 (another step pending), -2 (another writer). */
const DEFER = `
local current = redis.call('HGET', KEYS[2], 'stepId')
if current and current ~= ARGV[2] then return -1 end
if redis.call('LLEN', KEYS[1]) ~= tonumber(ARGV[1]) then return -2 end
redis.call('HSET', KEYS[2], 'stepId', ARGV[2], 'json', ARGV[3])
return 1`;

/** Completes the pending step: appends its messages and drops it, if it is the pending one and the history has the expected length. */
const COMPLETE = `
if redis.call('HGET', KEYS[2], 'stepId') ~= ARGV[2] then return -1 end
if redis.call('LLEN', KEYS[1]) ~= tonumber(ARGV[1]) then return -2 end
redis.call('DEL', KEYS[2])
return redis.call('RPUSH', KEYS[1], unpack(ARGV, 3))`;

/** Renews (ARGV[2] = ttl) or releases (ARGV[2] = 0) a claim held with token ARGV[1]. */
const CLAIM_RENEW = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == '0' then return redis.call('DEL', KEYS[1]) end
return redis.call('PEXPIRE', KEYS[1], ARGV[2])`;

/** Another process wrote the chat since this copy was read: nothing was written. */
function conflict(): ResumeConflictError {
  return new ResumeConflictError('The chat was written by another turn meanwhile; nothing was written');
}

/**
 * A chat's conversation in Redis: the history as a list (one message per entry, the Python kosong
 * JSON of `messageToJSON`), a step waiting for approval in a hash beside it, and a claim that one
 * turn at a time holds (a key with a token, renewed while the turn runs). Each write is one Lua
 * script that checks that this copy is the stored one (the history's length, the pending step), so
 * a copy that missed a write refuses to write. A claim reads the chat again, so a turn always starts
 * from what is stored.
 *
 * It keeps no call ledger: the agent's in-memory one protects retries within a process, and a
 * process killed while a tool runs leaves nothing that says so (`@kosong/bullmq`'s `RedisContext`
 * has the durable ledger).
 */
class RedisChatContext implements AgentContext {
  #messages: Message[] = [];
  #tokens = 0;
  #pending: PendingStep | undefined;
  #claim: { readonly token: string; readonly timer: NodeJS.Timeout } | undefined;
  readonly #history: string;
  readonly #pendingKey: string;
  readonly #tokensKey: string;
  readonly #claimKey: string;

  constructor(
    private readonly redis: Redis,
    name: string,
    private readonly claimTtlMs: number,
    readonly sessionKey: string,
    /** The contexts of the sessions that hold a claim now (released when the sessions close). */
    private readonly claimed: Set<RedisChatContext>,
  ) {
    this.#history = `${name}:history`;
    this.#pendingKey = `${name}:pending`;
    this.#tokensKey = `${name}:tokens`;
    this.#claimKey = `${name}:claim`;
  }

  get history(): readonly Message[] {
    return this.#messages;
  }

  get tokenCount(): number {
    return this.#tokens;
  }

  get pendingStep(): PendingStep | undefined {
    return this.#pending;
  }

  async restore(): Promise<ContextRestoreReport> {
    const replies = await this.redis.multi().lrange(this.#history, 0, -1).hget(this.#pendingKey, 'json').get(this.#tokensKey).exec();
    if (replies === null) throw new Error('The chat could not be read from Redis (the transaction was aborted)');
    for (const [error] of replies) if (error) throw error;
    const [entries, pending, tokens] = replies.map(([, value]) => value) as [string[], string | null, string | null];
    this.#messages = entries.map((entry) => messageFromJSON(JSON.parse(entry)));
    this.#pending = pending === null ? undefined : pendingStepFromJSON(JSON.parse(pending));
    this.#tokens = tokens === null ? 0 : Number(tokens);
    return { messages: this.#messages.length };
  }

  async append(...messages: Message[]): Promise<void> {
    if (this.#pending) throw new ApprovalPendingError(pendingApprovals(this.#pending));
    if (messages.length === 0) return;
    const encoded = messages.map((message) => JSON.stringify(messageToJSON(message)));
    const result = (await this.redis.eval(APPEND, 2, this.#history, this.#pendingKey, String(this.#messages.length), ...encoded)) as number;
    if (result === -1) {
      await this.restore();
      throw this.#pending ? new ApprovalPendingError(pendingApprovals(this.#pending)) : conflict();
    }
    if (result === -2) throw conflict();
    this.#messages.push(...messages);
  }

  async markTokenCount(count: number): Promise<void> {
    await this.redis.set(this.#tokensKey, String(count));
    this.#tokens = count;
  }

  async deferStep(pending: PendingStep): Promise<void> {
    if (this.#pending && this.#pending.stepId !== pending.stepId) throw new Error(`Another step (${this.#pending.stepId}) is pending`);
    const json = JSON.stringify(pendingStepToJSON(pending, this.#tokens));
    const result = (await this.redis.eval(DEFER, 2, this.#history, this.#pendingKey, String(this.#messages.length), pending.stepId, json)) as number;
    if (result === -1) throw new Error('Another step is pending in Redis');
    if (result === -2) throw conflict();
    this.#pending = pending;
  }

  async completeStep(stepId: string, ...messages: Message[]): Promise<void> {
    if (this.#pending?.stepId !== stepId) throw new Error(`Step ${stepId} is not the pending step`);
    const encoded = messages.map((message) => JSON.stringify(messageToJSON(message)));
    const result = (await this.redis.eval(COMPLETE, 2, this.#history, this.#pendingKey, String(this.#messages.length), stepId, ...encoded)) as number;
    if (result === -1) throw new Error(`Step ${stepId} is not the pending step in Redis`);
    if (result === -2) throw conflict();
    this.#pending = undefined;
    this.#messages.push(...messages);
  }

  /**
   * Claims the chat for one turn, then reads it again (what another process wrote since is seen).
   *
   * @throws ResumeConflictError when another turn holds it.
   */
  async claim(): Promise<() => Promise<void>> {
    if (this.#claim !== undefined) throw new ResumeConflictError();
    const token = randomUUID();
    const taken = await this.redis.set(this.#claimKey, token, 'PX', this.claimTtlMs, 'NX');
    if (taken !== 'OK') throw new ResumeConflictError();
    const timer = setInterval(() => void this.redis.eval(CLAIM_RENEW, 1, this.#claimKey, token, String(this.claimTtlMs)).catch(() => undefined), Math.max(1, Math.floor(this.claimTtlMs / 3)));
    timer.unref();
    this.#claim = { token, timer };
    this.claimed.add(this);
    try {
      await this.restore();
    } catch (error) {
      await this.#release();
      throw error;
    }
    return () => this.#release();
  }

  async #release(): Promise<void> {
    const claim = this.#claim;
    if (claim === undefined) return;
    this.#claim = undefined;
    this.claimed.delete(this);
    clearInterval(claim.timer);
    await this.redis.eval(CLAIM_RENEW, 1, this.#claimKey, claim.token, '0');
  }

  async close(): Promise<void> {
    await this.#release().catch(() => undefined);
  }
}

class RedisSessions implements ChatSessions {
  readonly #claimed = new Set<RedisChatContext>();
  #closed = false;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly claimTtlMs: number,
  ) {}

  async open(tenant: string, chatId: string): Promise<AgentContext> {
    if (this.#closed) throw new Error('The chat sessions are closed');
    if (!isValidChatId(chatId)) throw new TypeError(`Not a valid chat id: ${JSON.stringify(chatId)}`);
    const name = chatKeyName(this.prefix, tenant, chatId);
    const context = new RedisChatContext(this.redis, `${name}:chat`, this.claimTtlMs, `${encodeURIComponent(tenant)}/${encodeURIComponent(chatId)}`, this.#claimed);
    await context.restore();
    return context;
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#claimed].map((context) => context.close()));
  }
}

/**
 * Sessions in Redis, for several server processes behind one address: chat `id` of tenant `t` is a
 * list of messages (`<prefix>:{<t>/<id>}:chat:history`) with its pending step and claim beside it.
 * Every `open` reads the chat from Redis (a fresh copy: another process may have written it), and
 * a turn claims the chat first, so two turns of one chat — in this process or in two — never run
 * at once: the second gets a `ResumeConflictError` before anything runs (the server answers 409).
 *
 * `redis` is an ioredis client of yours: used as it is, never closed here. No durable call ledger
 * is kept (see `@kosong/bullmq`'s `RedisContext` for one).
 *
 * @throws TypeError for an option it does not know, or a `claimTtlMs` that is no positive integer.
 */
export function redisSessions(redis: Redis, options: RedisSessionsOptions = {}): ChatSessions {
  checkKnownOptions('redisSessions', options, REDIS_SESSIONS_OPTIONS);
  if (typeof redis?.eval !== 'function') throw new TypeError('redisSessions: redis must be an ioredis client');
  const claimTtlMs = options.claimTtlMs ?? DEFAULT_CLAIM_TTL_MS;
  if (!Number.isSafeInteger(claimTtlMs) || claimTtlMs <= 0) throw new TypeError(`redisSessions: claimTtlMs must be a positive integer of ms, got ${String(claimTtlMs)}`);
  return new RedisSessions(redis, options.prefix ?? DEFAULT_REDIS_PREFIX, claimTtlMs);
}
