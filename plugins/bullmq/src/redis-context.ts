import {
  ApprovalPendingError,
  messageFromJSON,
  messageToJSON,
  pendingApprovals,
  pendingStepFromJSON,
  pendingStepToJSON,
  type AgentContext,
  type ContextRestoreReport,
  type Message,
  type PendingStep,
} from '@kosong/core';
import { Redis } from 'ioredis';
import { closeRedis, createRedis, type RedisConnection } from './connection.js';
import { FencedError } from './errors.js';
import { DEFAULT_PREFIX, SessionKeys } from './keys.js';
import { APPEND_SCRIPT, COMPLETE_STEP_SCRIPT, DEFER_STEP_SCRIPT, FENCED_HSET_SCRIPT } from './scripts.js';

/** Options of a {@link RedisContext}. */
export interface RedisContextOptions {
  /** Redis: a URL or options (a connection opened here, closed by `close()`), or a client of yours, used as it is and never closed. */
  readonly connection: RedisConnection;
  /** The tenant the session belongs to. */
  readonly tenant?: string | undefined;
  /** The session id. */
  readonly session: string;
  /** Prefix of every Redis key (default `kosong`). */
  readonly prefix?: string;
  /**
   * The fencing token of a `SessionLease`: every write is refused (a {@link FencedError}) once the
   * lease carries another token or expired. Without one, writes are only checked against concurrent
   * appends (a copy that is not up to date cannot append).
   */
  readonly fence?: number;
  /** The turn the appends belong to: the first append is its input, each further one a step (see `AgentWorker`). */
  readonly turn?: RedisContextTurn;
}

/** What the context records about the running turn with each append. */
export interface RedisContextTurn {
  readonly id: string;
  /** The turn's usage so far, stored (as JSON) with each step. */
  readonly usage?: () => unknown;
}

/** A session's turn progress as stored with its history. @internal */
export interface SessionTurnProgress {
  readonly turn: string | undefined;
  readonly steps: number;
  readonly usage: unknown;
}

/**
 * A conversation history kept in Redis, for agents that run on any machine: the `AgentContext` of
 * `Agent`, like `LinearContext`.
 *
 * Messages are stored one per list entry in the Python kosong JSON format. Each `append` — a turn's
 * input, or one whole step (the assistant message and its tool messages) — is one Lua script: all of
 * its messages are stored or none, so the history never holds half a step. With a fencing token,
 * the script also checks that the writer still holds the session's lease.
 *
 * A step waiting for approval is kept beside the history (in the session's meta hash, as the JSON
 * of `pendingStepToJSON`), recorded and completed by scripts that are fenced and checked like
 * appends; completing it drops it and appends its messages in one script. While it waits, appends
 * are refused (inside Redis too, so a copy that missed the deferral cannot append).
 */
export class RedisContext implements AgentContext {
  readonly keys: SessionKeys;
  readonly #redis: Redis;
  readonly #ownsClient: boolean;
  readonly #messages: Message[] = [];
  #tokens = 0;
  #pending: PendingStep | undefined;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: RedisContextOptions) {
    this.keys = new SessionKeys(options.prefix ?? DEFAULT_PREFIX, options.tenant, options.session);
    const { connection } = options;
    if (connection instanceof Redis) {
      this.#redis = connection;
      this.#ownsClient = false;
    } else {
      this.#redis = createRedis(connection, { blocking: false, name: 'kosong-context' });
      this.#ownsClient = true;
    }
  }

  /** The messages so far (a read-only view). */
  get history(): readonly Message[] {
    return this.#messages;
  }

  /** The last token count marked. */
  get tokenCount(): number {
    return this.#tokens;
  }

  /** The step whose calls wait for approval, if there is one. */
  get pendingStep(): PendingStep | undefined {
    return this.#pending;
  }

  /** Loads the session's history from Redis. @throws if this context already has messages. */
  async restore(): Promise<ContextRestoreReport> {
    if (this.#messages.length > 0 || this.#pending) throw new Error('RedisContext.restore(): the context already has messages');
    const [entries, [tokens, pending]] = await Promise.all([this.#redis.lrange(this.keys.history, 0, -1), this.#redis.hmget(this.keys.meta, 'tokenCount', 'pendingStep')]);
    entries.forEach((entry, index) => {
      try {
        this.#messages.push(messageFromJSON(JSON.parse(entry)));
      } catch (error) {
        this.#messages.length = 0;
        throw new Error(`Session "${this.options.session}": message ${index + 1} in Redis is not a valid message (${(error as Error).message})`, { cause: error });
      }
    });
    this.#tokens = tokens === null || tokens === undefined ? 0 : Number(tokens);
    if (pending !== null && pending !== undefined) {
      try {
        this.#pending = pendingStepFromJSON(JSON.parse(pending));
      } catch (error) {
        this.#messages.length = 0;
        throw new Error(`Session "${this.options.session}": the step waiting for approval in Redis is not valid (${(error as Error).message})`, { cause: error });
      }
    }
    return { messages: this.#messages.length };
  }

  /** The running turn's progress as stored (which turn, how many whole steps, its usage). @internal */
  async turnProgress(): Promise<SessionTurnProgress> {
    const [turn, steps, usage] = await this.#redis.hmget(this.keys.meta, 'turn', 'turnSteps', 'turnUsage');
    return { turn: turn ?? undefined, steps: Number(steps ?? 0), usage: usage ? (JSON.parse(usage) as unknown) : undefined };
  }

  /**
   * Appends messages in one atomic script: Redis and memory hold all of them, or (on a rejection)
   * neither holds any. Appends run one at a time, in call order.
   *
   * @throws {FencedError} when the lease this context writes under is gone; an `Error` when another
   * writer appended since this context last read or wrote the history, or when Redis is unreachable;
   * `ApprovalPendingError` while a step waits for approval.
   */
  append(...messages: Message[]): Promise<void> {
    if (messages.length === 0) return Promise.resolve();
    if (this.#pending) return Promise.reject(new ApprovalPendingError(pendingApprovals(this.#pending)));
    const encoded = messages.map((m) => JSON.stringify(messageToJSON(m)));
    return this.#write(async () => {
      const { fence, turn } = this.options;
      const usage = turn?.usage?.();
      await this.#redis.eval(
        APPEND_SCRIPT,
        3,
        this.keys.history,
        this.keys.meta,
        this.keys.owner,
        fence ?? '',
        this.#messages.length,
        turn?.id ?? '',
        usage === undefined ? '' : JSON.stringify(usage),
        ...encoded,
      );
      this.#messages.push(...messages);
    });
  }

  /**
   * Records a step whose calls wait for approval, in one fenced script (replacing a pending step of
   * the same id).
   *
   * @throws {FencedError}; an `Error` when another step waits, the copy is not up to date, or Redis is unreachable.
   */
  deferStep(pending: PendingStep): Promise<void> {
    const encoded = JSON.stringify(pendingStepToJSON(pending, this.#tokens));
    return this.#write(async () => {
      await this.#redis.eval(DEFER_STEP_SCRIPT, 3, this.keys.history, this.keys.meta, this.keys.owner, this.options.fence ?? '', this.#messages.length, pending.stepId, encoded);
      this.#pending = pending;
    });
  }

  /**
   * Completes the pending step `stepId`: drops it and appends its messages, in one fenced script.
   *
   * @throws {FencedError}; an `Error` when the step does not wait, the copy is not up to date, or Redis is unreachable.
   */
  completeStep(stepId: string, ...messages: Message[]): Promise<void> {
    const pending = this.#pending;
    if (pending?.stepId !== stepId) return Promise.reject(new Error(`Session "${this.options.session}": step "${stepId}" does not wait for approval`));
    if (messages.length === 0) return Promise.reject(new TypeError('RedisContext.completeStep(): a step has at least its assistant message'));
    const encoded = messages.map((m) => JSON.stringify(messageToJSON(m)));
    return this.#write(async () => {
      const { fence, turn } = this.options;
      const usage = turn?.usage?.();
      await this.#redis.eval(
        COMPLETE_STEP_SCRIPT,
        3,
        this.keys.history,
        this.keys.meta,
        this.keys.owner,
        fence ?? '',
        this.#messages.length,
        stepId,
        turn?.id ?? '',
        usage === undefined ? '' : JSON.stringify(usage),
        ...encoded,
      );
      this.#messages.push(...messages);
      this.#pending = undefined;
    });
  }

  /** Records the token count of the history (fenced like `append`). */
  markTokenCount(count: number): Promise<void> {
    return this.#write(async () => {
      await this.#redis.eval(FENCED_HSET_SCRIPT, 2, this.keys.meta, this.keys.owner, this.options.fence ?? '', 'tokenCount', count);
      this.#tokens = count;
    });
  }

  /** Runs writes one at a time, in call order, with Redis' refusals as typed errors. */
  #write(write: () => Promise<void>): Promise<void> {
    const run = this.#queue.then(async () => {
      try {
        await write();
      } catch (error) {
        throw this.#translate(error);
      }
    });
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /** Waits for writes in flight; closes the connection if this context opened it. */
  async close(): Promise<void> {
    await this.#queue;
    if (this.#ownsClient) await closeRedis(this.#redis);
  }

  #translate(error: unknown): unknown {
    const message = error instanceof Error ? error.message : '';
    if (message.includes('FENCED')) return new FencedError(this.options.tenant, this.options.session, this.options.fence ?? 0);
    if (message.includes('STALE')) {
      return new Error(`Session "${this.options.session}": another writer appended to the history since this context read it; nothing was written`, { cause: error });
    }
    if (message.includes('PENDING')) {
      return new Error(`Session "${this.options.session}": another writer deferred or completed a step waiting for approval since this context read it; nothing was written`, { cause: error });
    }
    return error;
  }
}
