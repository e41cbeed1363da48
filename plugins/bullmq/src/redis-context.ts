import { randomUUID } from 'node:crypto';
import {
  ApprovalPendingError,
  OpenStepState,
  ResumeConflictError,
  callRecordFromJSON,
  callRecordToJSON,
  messageFromJSON,
  messageToJSON,
  pendingApprovals,
  pendingStepFromJSON,
  pendingStepToJSON,
  type AgentContext,
  type CallLedger,
  type CallOutcomeRecord,
  type CallStartRecord,
  type ContextRestoreReport,
  type Message,
  type OpenStep,
  type PendingStep,
} from '@kosong/core';
import { Redis } from 'ioredis';
import { asUnavailable, closeRedis, createRedis, type RedisConnection } from './connection.js';
import { FencedError } from './errors.js';
import { DEFAULT_PREFIX, SessionKeys } from './keys.js';
import { checkKnownOptions, type KnownOptions } from './options.js';
import { APPEND_SCRIPT, COMPLETE_STEP_SCRIPT, DEFER_STEP_SCRIPT, FENCED_HSET_SCRIPT, LEDGER_RECORD_SCRIPT } from './scripts.js';
import { SessionLease } from './session-lease.js';

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
  /**
   * How long a claim ({@link RedisContext.claim}, for a context without `fence`) lasts without
   * renewal (default 30 s, renewed every third of it): a process killed while it holds the session
   * blocks it this long.
   */
  readonly claimTtlMs?: number;
  /** How long commands wait for Redis to come back before they fail with a `RedisUnavailableError` (default 15 s; for a connection opened here). */
  readonly reconnectWindowMs?: number;
}

const REDIS_CONTEXT_OPTIONS: KnownOptions<RedisContextOptions> = {
  connection: true,
  tenant: true,
  session: true,
  prefix: true,
  fence: true,
  turn: true,
  claimTtlMs: true,
  reconnectWindowMs: true,
};

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

/** How long a claim lasts without renewal, by default. */
const DEFAULT_CLAIM_TTL_MS = 30_000;

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
 *
 * The call ledger ({@link RedisContext.ledger}) is a list beside the history: a call's start record
 * is stored by one fenced script before the call runs, its outcome by another when it settles
 * (sent without waiting); the append that adds the step deletes the list in the same script. Every
 * write checks that this copy is the stored session (history length, pending step, ledger length),
 * so a copy that missed a write refuses to record a call, and so runs none.
 *
 * Writes go to Redis one at a time, in call order. Each carries an id: a script resent after a
 * reconnection that had been applied before the connection dropped is not applied twice.
 */
export class RedisContext implements AgentContext, CallLedger {
  readonly keys: SessionKeys;
  readonly #redis: Redis;
  readonly #ownsClient: boolean;
  readonly #messages: Message[] = [];
  #tokens = 0;
  #pending: PendingStep | undefined;
  #queue: Promise<unknown> = Promise.resolve();
  #ledger = new OpenStepState();
  /** Records of the open step: applied to {@link RedisContext.#ledger}, sent to Redis (or being sent). */
  #ledgerLength = 0;
  /** The lease of a claim (a context without `fence`), while it is held. */
  #claim: SessionLease | undefined;
  readonly #writer = randomUUID();
  #writes = 0;

  /** @throws TypeError for an option it does not know. */
  constructor(private readonly options: RedisContextOptions) {
    checkKnownOptions('RedisContext', options, REDIS_CONTEXT_OPTIONS);
    this.keys = new SessionKeys(options.prefix ?? DEFAULT_PREFIX, options.tenant, options.session);
    const { connection } = options;
    if (connection instanceof Redis) {
      this.#redis = connection;
      this.#ownsClient = false;
    } else {
      this.#redis = createRedis(connection, { blocking: false, name: 'kosong-context', ...(options.reconnectWindowMs === undefined ? {} : { reconnectWindowMs: options.reconnectWindowMs }) });
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

  /** `tenant/session`, percent-encoded: the start of every call's idempotency key (see `AgentContext.sessionKey`). */
  get sessionKey(): string {
    return this.keys.name;
  }

  /** The call ledger of this context: records in Redis, beside the history. */
  get ledger(): CallLedger {
    return this;
  }

  /** The step whose calls were recorded and that is not in the history, if any. */
  get openStep(): OpenStep | undefined {
    return this.#ledger.openStep;
  }

  /**
   * Loads the session — history, token count, pending step and call ledger, read in one
   * transaction — after checking all of it: nothing changes in this context unless every message
   * and record is valid.
   *
   * @throws an Error naming the session and the bad entry; an Error if this context already has messages.
   */
  async restore(): Promise<ContextRestoreReport> {
    if (this.#messages.length > 0 || this.#pending || this.#ledgerLength > 0) throw new Error('RedisContext.restore(): the context already has messages');
    let read: [Error | null, unknown][] | null;
    try {
      read = await this.#redis.multi().lrange(this.keys.history, 0, -1).hmget(this.keys.meta, 'tokenCount', 'pendingStep').lrange(this.keys.ledger, 0, -1).exec();
    } catch (error) {
      throw asUnavailable(error, `${this.#name()}: cannot restore`);
    }
    const [entries, [tokens, pending], records] = (read ?? []).map(([error, value]) => {
      if (error) throw error;
      return value;
    }) as [string[], (string | null)[], string[]];
    const messages = entries.map((entry, index) =>
      parse(() => messageFromJSON(JSON.parse(entry)), (why) => `${this.#name()}: message ${index + 1} in Redis is not a valid message (${why})`),
    );
    const pendingStep =
      pending === null || pending === undefined
        ? undefined
        : parse(() => pendingStepFromJSON(JSON.parse(pending)), (why) => `${this.#name()}: the step waiting for approval in Redis is not valid (${why})`);
    const ledger = new OpenStepState();
    records.forEach((entry, index) =>
      parse(
        () => ledger.apply(callRecordFromJSON(JSON.parse(entry))),
        (why) => `${this.#name()}: record ${index + 1} of the call ledger in Redis is not valid (${why})`,
      ),
    );
    this.#messages.push(...messages);
    this.#tokens = tokens === null || tokens === undefined ? 0 : Number(tokens);
    this.#pending = pendingStep;
    this.#ledger = ledger;
    this.#ledgerLength = records.length;
    return { messages: this.#messages.length };
  }

  /**
   * Claims the session for one turn (a run or a resume: `Agent` calls it), so that no other process
   * runs a turn of it meanwhile. A context with a `fence` writes under a lease already: it resolves
   * at once. Otherwise it takes the session's lease — if nobody holds it and the session is what this
   * context read, in one script — renews it while held, and writes under its fencing token until
   * the release.
   *
   * @throws ResumeConflictError when another process holds the session, or wrote to it since this
   *   context read it (restore a new context to see what it did); nothing was run.
   */
  async claim(): Promise<() => Promise<void>> {
    if (this.options.fence !== undefined) return () => Promise.resolve();
    if (this.#claim) throw new ResumeConflictError(`${this.#name()}: this context is claimed already; nothing was run`);
    await this.#queue;
    const snapshot = { historyLength: this.#messages.length, pendingStepId: this.#pending?.stepId, ledgerLength: this.#ledgerLength };
    let claimed: SessionLease | 'held' | 'changed';
    try {
      claimed = await SessionLease.claim(this.#redis, this.keys, this.options.claimTtlMs ?? DEFAULT_CLAIM_TTL_MS, snapshot, () => undefined);
    } catch (error) {
      throw asUnavailable(error, `${this.#name()}: cannot claim the session`);
    }
    if (claimed === 'held') throw new ResumeConflictError(`${this.#name()}: another process holds the session (a turn or a resume runs there); nothing was run`);
    if (claimed === 'changed') {
      throw new ResumeConflictError(`${this.#name()}: another process wrote to the session since this context read it; restore it again to see what changed; nothing was run`);
    }
    this.#claim = claimed;
    let released = false;
    return async () => {
      if (released) return;
      released = true;
      await this.#queue; // outcomes sent without waiting are written under the claim
      this.#claim = undefined;
      await claimed.release();
    };
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
    return this.#write('cannot append', async (fence, writeId) => {
      const { turn } = this.options;
      const usage = turn?.usage?.();
      await this.#redis.eval(APPEND_SCRIPT, 4, ...this.#writeKeys(), fence, writeId, this.#messages.length, turn?.id ?? '', usage === undefined ? '' : JSON.stringify(usage), ...encoded);
      this.#messages.push(...messages);
      this.#closeLedger();
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
    return this.#write('cannot defer the step', async (fence, writeId) => {
      await this.#redis.eval(DEFER_STEP_SCRIPT, 4, ...this.#writeKeys(), fence, writeId, this.#messages.length, pending.stepId, encoded);
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
    return this.#write('cannot complete the step', async (fence, writeId) => {
      const { turn } = this.options;
      const usage = turn?.usage?.();
      await this.#redis.eval(COMPLETE_STEP_SCRIPT, 4, ...this.#writeKeys(), fence, writeId, this.#messages.length, stepId, turn?.id ?? '', usage === undefined ? '' : JSON.stringify(usage), ...encoded);
      this.#messages.push(...messages);
      this.#pending = undefined;
      this.#closeLedger();
    });
  }

  /**
   * Records a call's start, in one fenced script, before the call runs: it resolves once Redis has
   * stored it. How durable that is, is Redis' own persistence (AOF `appendfsync always`: synced to
   * disk before Redis answers); core's `sync: false` (a call safe to run again) changes nothing here.
   *
   * @throws Error when the record does not follow the open step; {@link FencedError}; an Error when
   *   this copy is not the stored session (another writer wrote since it read it); a
   *   `RedisUnavailableError`.
   */
  recordStart(record: CallStartRecord): Promise<void> {
    return this.#record(record);
  }

  /** Records a call's outcome, in one fenced script (the caller need not wait for it: later writes go after it). */
  recordOutcome(record: CallOutcomeRecord): Promise<void> {
    return this.#record(record);
  }

  #record(record: CallStartRecord | CallOutcomeRecord): Promise<void> {
    try {
      this.#ledger.apply(record); // checked against the records before it, and kept, before it is sent
    } catch (error) {
      return Promise.reject(error as Error);
    }
    // Its place in the list: a record that failed to reach Redis makes every later one fail too (STALE), so Redis only ever holds a prefix of the records.
    const at = this.#ledgerLength++;
    const encoded = JSON.stringify(callRecordToJSON(record, this.#tokens));
    return this.#write(`cannot record call ${record.index} of step "${record.key}"`, async (fence, writeId) => {
      await this.#redis.eval(LEDGER_RECORD_SCRIPT, 4, ...this.#writeKeys(), fence, writeId, this.#messages.length, this.#pending?.stepId ?? '', at, encoded);
    });
  }

  /** Records the token count of the history (fenced like `append`). */
  markTokenCount(count: number): Promise<void> {
    return this.#write('cannot record the token count', async (fence) => {
      await this.#redis.eval(FENCED_HSET_SCRIPT, 2, this.keys.meta, this.keys.owner, fence, 'tokenCount', count);
      this.#tokens = count;
    });
  }

  /** The keys every write script takes: history, meta, owner, ledger. */
  #writeKeys(): [string, string, string, string] {
    return [this.keys.history, this.keys.meta, this.keys.owner, this.keys.ledger];
  }

  /** The open step is in the history now. */
  #closeLedger(): void {
    this.#ledger.close();
    this.#ledgerLength = 0;
  }

  /**
   * Runs writes one at a time, in call order, with Redis' refusals as typed errors. Each gets the
   * fence it writes under (the lease's token; `''`: none) and an id of its own.
   */
  #write(doing: string, write: (fence: string, writeId: string) => Promise<void>): Promise<void> {
    const run = this.#queue.then(async () => {
      const fence = this.options.fence ?? this.#claim?.token;
      try {
        await write(fence === undefined ? '' : String(fence), `${this.#writer}:${++this.#writes}`);
      } catch (error) {
        throw this.#translate(error, doing, fence);
      }
    });
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /** Waits for writes in flight and gives a claim up; closes the connection if this context opened it. */
  async close(): Promise<void> {
    await this.#queue;
    const claim = this.#claim;
    this.#claim = undefined;
    await claim?.release();
    if (this.#ownsClient) await closeRedis(this.#redis);
  }

  /** `Session "s" of tenant "t"`. */
  #name(): string {
    const { tenant, session } = this.options;
    return `Session "${session}"${tenant === undefined ? '' : ` of tenant "${tenant}"`}`;
  }

  #translate(error: unknown, doing: string, fence: number | undefined): unknown {
    const message = error instanceof Error ? error.message.replace(/^ERR /, '') : '';
    const because = (why: string): Error => new Error(`${this.#name()}: ${doing}: ${why}; nothing was written`, { cause: error });
    if (message.startsWith('FENCED')) return new FencedError(this.options.tenant, this.options.session, fence ?? 0);
    if (message.startsWith('STALE')) return because('another writer appended to the history or recorded calls since this context read it');
    if (message.startsWith('NOT_PENDING')) return because('the step does not wait for approval any more (another writer completed it)');
    if (message.startsWith('OTHER_PENDING')) return because('another step waits for approval');
    if (message.startsWith('PENDING')) return because('another writer deferred or completed a step waiting for approval since this context read it');
    return asUnavailable(error, `${this.#name()}: ${doing}`);
  }
}

/** Runs a parse, or throws an Error with the message `describe` makes of its failure. */
function parse<T>(run: () => T, describe: (why: string) => string): T {
  try {
    return run();
  } catch (error) {
    throw new Error(describe((error as Error).message), { cause: error });
  }
}
