import { randomUUID } from 'node:crypto';
import {
  ApprovalPendingError,
  ResumeConflictError,
  messageFromJSON,
  messageToJSON,
  pendingApprovals,
  type AgentContext,
  type ContextRestoreReport,
  type Message,
  type PendingStep,
} from '@kosong/core';
import {
  OpenStepState,
  callRecordFromJSON,
  compactionFromJSON,
  compactionToJSON,
  isCompactionJSON,
  type CompactionRecord,
  callRecordToJSON,
  pendingStepFromJSON,
  pendingStepToJSON,
  type CallLedger,
  type CallOutcomeRecord,
  type CallStartRecord,
  type OpenStep,
} from '@kosong/core/context-kit';
import { Redis } from 'ioredis';
import { asUnavailable, closeRedis, createRedis, type RedisConnection } from './connection.js';
import { FencedError } from './errors.js';
import { DEFAULT_PREFIX, SessionKeys } from './keys.js';
import { checkKnownOptions, type KnownOptions } from './options.js';
import { APPEND_SCRIPT, COMPACT_SCRIPT, COMPLETE_STEP_SCRIPT, DEFER_STEP_SCRIPT, FENCED_HSET_SCRIPT, LEDGER_RECORD_SCRIPT } from './scripts.js';
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
  /** How long commands wait for Redis to come back, or a frozen one to answer, before they fail with a `RedisUnavailableError` (default 15 s; for a connection opened here). */
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

const RESOLVED: Promise<void> = Promise.resolve();

/** Ledger records waiting to go to Redis in one script. */
interface RecordBatch {
  readonly key: string;
  readonly encoded: string[];
  /** The ledger's length before them. */
  readonly at: number;
  /** How many are starts. */
  starts: number;
  readonly done: Promise<void>;
  readonly settle: (sent: Promise<void> | undefined) => void;
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
 * is stored by a fenced script before the call runs, its outcome when it settles (sent without
 * waiting); records of one turn of the event loop share a script, and outcomes that the step's
 * append overtakes are not sent at all (the append holds the results). The append that adds the
 * step deletes the list in the same script. Every
 * write checks that this copy is the stored session (history length, pending step, ledger length),
 * so a copy that missed a write refuses to record a call, and so runs none.
 *
 * Writes go to Redis in call order, each sent without waiting for the replies of those before it
 * (a step's call starts, its outcomes and its append share round trips). Each carries an id: a
 * script resent after a reconnection that had been applied before the connection dropped is not
 * applied twice.
 */
export class RedisContext implements AgentContext, CallLedger {
  readonly keys: SessionKeys;
  readonly #redis: Redis;
  readonly #ownsClient: boolean;
  readonly #messages: Message[] = [];
  #tokens = 0;
  #pending: PendingStep | undefined;
  /** The last write sent: settles after every write sent before it, rejecting when one of them failed. */
  #tail: Promise<void> = RESOLVED;
  /** Writes sent whose reply has not been handled yet. */
  #inFlight = 0;
  /** The history list's length and the pending step once every write sent is applied (what the next write expects to find). */
  #sentLength = 0;
  /**
   * How many more entries the history list has than the history: each compaction adds its record
   * and takes the messages it replaced out of the history (they stay in the list).
   */
  #compacted = 0;
  #sentPending: string | undefined;
  /** The failure of an append that resolved before Redis answered (see `append`): every later write, `flush()` and `close()` reject with it. */
  #failure: unknown;
  /** Ledger records not sent yet (see `#record`). */
  #records: RecordBatch | undefined;
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
    const messages: Message[] = [];
    let compacted = 0;
    entries.forEach((entry, index) => {
      const value = parse(() => JSON.parse(entry) as unknown, (why) => `${this.#name()}: entry ${index + 1} of the history in Redis is not JSON (${why})`);
      if (!isCompactionJSON(value)) {
        messages.push(parse(() => messageFromJSON(value), (why) => `${this.#name()}: message ${index + 1} in Redis is not a valid message (${why})`));
        return;
      }
      const { replaces, summary } = parse(() => compactionFromJSON(value), (why) => `${this.#name()}: entry ${index + 1} of the history in Redis is not a valid compaction (${why})`);
      if (replaces > messages.length) throw new Error(`${this.#name()}: entry ${index + 1} of the history in Redis compacts ${replaces} messages of a history of ${messages.length}`);
      messages.splice(0, replaces, summary);
      compacted += replaces;
    });
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
    this.#compacted = compacted;
    this.#sentLength = this.#messages.length + compacted;
    this.#sentPending = pendingStep?.stepId;
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
    await this.#settled();
    const snapshot = { historyLength: this.#messages.length + this.#compacted, pendingStepId: this.#pending?.stepId, ledgerLength: this.#ledgerLength };
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
      await this.#settled(); // outcomes sent without waiting are written under the claim
      this.#claim = undefined;
      await claimed.release();
      if (this.#failure !== undefined) throw this.#failure;
    };
  }

  /** The running turn's progress as stored (which turn, how many whole steps, its usage). @internal */
  async turnProgress(): Promise<SessionTurnProgress> {
    const [turn, steps, usage] = await this.#redis.hmget(this.keys.meta, 'turn', 'turnSteps', 'turnUsage');
    return { turn: turn ?? undefined, steps: Number(steps ?? 0), usage: usage ? (JSON.parse(usage) as unknown) : undefined };
  }

  /**
   * Appends messages in one atomic script: Redis and memory hold all of them, or (on a rejection)
   * neither holds any. Appends run in call order.
   *
   * The append that closes a step whose calls the ledger recorded resolves as soon as it is sent,
   * with the messages in memory, so that the next step need not wait for Redis: the step's records
   * are stored already, and the next write is sent right behind it (one round trip for both). If
   * Redis then refuses it, this context is done: every later write, `flush()`, the claim's release
   * and `close()` reject with that error (restore a new context; the stored ledger completes the step).
   *
   * @throws {FencedError} when the lease this context writes under is gone; an `Error` when another
   * writer appended since this context last read or wrote the history, or when Redis is unreachable;
   * `ApprovalPendingError` while a step waits for approval.
   */
  append(...messages: Message[]): Promise<void> {
    if (messages.length === 0) return Promise.resolve();
    if (this.#pending) return Promise.reject(new ApprovalPendingError(pendingApprovals(this.#pending)));
    this.#sendRecords(true);
    const encoded = messages.map((m) => JSON.stringify(messageToJSON(m)));
    const { turn } = this.options;
    const usage = turn?.usage?.();
    const expected = this.#sentLength;
    this.#sentLength += messages.length;
    const send = (fence: string, writeId: string): Promise<unknown> =>
      this.#redis.eval(APPEND_SCRIPT, 4, ...this.#writeKeys(), fence, writeId, expected, turn?.id ?? '', usage === undefined ? '' : JSON.stringify(usage), ...encoded);
    if (this.#ledger.key === undefined) {
      return this.#write('cannot append', send, () => {
        this.#messages.push(...messages);
        this.#closeLedger();
      });
    }
    // It closes a recorded step: in memory now, in Redis right behind the step's records.
    this.#messages.push(...messages);
    this.#closeLedger();
    this.#write('cannot append', send).catch((error: unknown) => (this.#failure ??= error));
    return RESOLVED;
  }

  /**
   * Compacts the history in one fenced script: the compaction record goes to the end of the history
   * list, whose entries before it stay (the whole original can be read from Redis); `restore()`
   * applies it. Atomic: Redis holds the record or not.
   *
   * @throws Error while a step waits for approval or is open in the call ledger, for a bad
   *   `replaces`, or as `append` does.
   */
  compact(record: CompactionRecord): Promise<void> {
    const { replaces, summary } = record;
    if (this.#pending) return Promise.reject(new ApprovalPendingError(pendingApprovals(this.#pending)));
    if (this.#ledger.key !== undefined) return Promise.reject(new Error(`${this.#name()}: cannot compact while a step is open in the call ledger`));
    if (!Number.isSafeInteger(replaces) || replaces < 1 || replaces > this.#messages.length) {
      return Promise.reject(new Error(`${this.#name()}: compact(): replaces must be between 1 and ${this.#messages.length} (the history's length), got ${String(replaces)}`));
    }
    const encoded = JSON.stringify(compactionToJSON(record, this.#tokens));
    const expected = this.#sentLength;
    this.#sentLength += 1;
    return this.#write(
      'cannot compact',
      (fence, writeId) => this.#redis.eval(COMPACT_SCRIPT, 4, ...this.#writeKeys(), fence, writeId, expected, encoded),
      () => {
        this.#messages.splice(0, replaces, summary);
        this.#compacted += replaces;
      },
    );
  }

  /**
   * Records a step whose calls wait for approval, in one fenced script (replacing a pending step of
   * the same id).
   *
   * @throws {FencedError}; an `Error` when another step waits, the copy is not up to date, or Redis is unreachable.
   */
  deferStep(pending: PendingStep): Promise<void> {
    this.#sendRecords();
    const encoded = JSON.stringify(pendingStepToJSON(pending, this.#tokens));
    const expected = this.#sentLength;
    this.#sentPending = pending.stepId;
    return this.#write(
      'cannot defer the step',
      (fence, writeId) => this.#redis.eval(DEFER_STEP_SCRIPT, 4, ...this.#writeKeys(), fence, writeId, expected, pending.stepId, encoded),
      () => (this.#pending = pending),
    );
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
    this.#sendRecords(true);
    const encoded = messages.map((m) => JSON.stringify(messageToJSON(m)));
    const { turn } = this.options;
    const usage = turn?.usage?.();
    const expected = this.#sentLength;
    this.#sentLength += messages.length;
    this.#sentPending = undefined;
    return this.#write(
      'cannot complete the step',
      (fence, writeId) =>
        this.#redis.eval(COMPLETE_STEP_SCRIPT, 4, ...this.#writeKeys(), fence, writeId, expected, stepId, turn?.id ?? '', usage === undefined ? '' : JSON.stringify(usage), ...encoded),
      () => {
        this.#messages.push(...messages);
        this.#pending = undefined;
        this.#closeLedger();
      },
    );
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

  /**
   * Records a call's outcome, in one fenced script with the other records of this turn of the event
   * loop (the caller need not wait for it: later writes go after it). An outcome still waiting when
   * the step's append comes is not sent: the append holds the result and deletes the step's records.
   */
  recordOutcome(record: CallOutcomeRecord): Promise<void> {
    return this.#record(record);
  }

  /**
   * Adds a record to the batch that goes to Redis on the next turn of the event loop (the starts of
   * the calls a chunk of the stream completed share one script), or before the next other write.
   */
  #record(record: CallStartRecord | CallOutcomeRecord): Promise<void> {
    try {
      this.#ledger.apply(record); // checked against the records before it, and kept, before it is sent
    } catch (error) {
      return Promise.reject(error as Error);
    }
    let batch = this.#records;
    if (batch === undefined) {
      let settle!: (sent: Promise<void> | undefined) => void;
      const done = new Promise<void>((resolve) => (settle = resolve));
      // Its place in the list: a batch that failed to reach Redis makes every later one fail too (STALE), so Redis only ever holds a prefix of the records.
      batch = this.#records = { key: record.key, encoded: [], at: this.#ledgerLength, starts: 0, done, settle };
      setImmediate(() => this.#sendRecords());
    }
    this.#ledgerLength++;
    batch.encoded.push(JSON.stringify(callRecordToJSON(record, this.#tokens)));
    if (record.type === 'start') batch.starts++;
    return batch.done;
  }

  /**
   * Sends the records batched so far, in one fenced script. `closing`: the write that follows adds
   * the step to the history (and deletes its records), so a batch of outcomes alone is not sent: the
   * step's messages hold those results.
   */
  #sendRecords(closing = false): void {
    const batch = this.#records;
    if (batch === undefined) return;
    this.#records = undefined;
    if (closing && batch.starts === 0) {
      batch.settle(undefined);
      return;
    }
    const { at, encoded } = batch;
    const expected = this.#sentLength;
    const pending = this.#sentPending ?? '';
    const doing = `cannot record ${encoded.length === 1 ? 'a call' : `${encoded.length} calls`} of step "${batch.key}"`;
    batch.settle(this.#write(doing, (fence, writeId) => this.#redis.eval(LEDGER_RECORD_SCRIPT, 4, ...this.#writeKeys(), fence, writeId, expected, pending, at, ...encoded)));
  }

  /** Records the token count of the history (fenced like `append`). */
  markTokenCount(count: number): Promise<void> {
    this.#sendRecords();
    return this.#write(
      'cannot record the token count',
      (fence) => this.#redis.eval(FENCED_HSET_SCRIPT, 2, this.keys.meta, this.keys.owner, fence, 'tokenCount', count),
      () => (this.#tokens = count),
    );
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
   * Sends a write at once — without waiting for the replies of those sent before it: Redis runs the
   * scripts of one connection in order, and each checks the state the writes before it leave (the
   * history's length, the pending step, the ledger's length), so Redis only ever holds a prefix of
   * them. Replies are handled in order: `applied` runs for a write that Redis stored, after those of
   * the writes before it; when one fails, the writes sent after it reject with its error (Redis
   * refused them too). Each write gets the fence it writes under (the lease's token; `''`: none)
   * and an id of its own.
   */
  #write(doing: string, send: (fence: string, writeId: string) => Promise<unknown>, applied?: () => void): Promise<void> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure as Error);
    const fence = this.options.fence ?? this.#claim?.token;
    let reply: Promise<unknown>;
    try {
      reply = send(fence === undefined ? '' : String(fence), `${this.#writer}:${++this.#writes}`);
    } catch (error) {
      reply = Promise.reject(error as Error);
    }
    const stored = reply.then(
      () => undefined,
      (error: unknown) => {
        throw this.#translate(error, doing, fence);
      },
    );
    stored.catch(() => undefined); // handled in order, below
    this.#inFlight++;
    const run = this.#tail.then(() => stored).then(
      () => {
        applied?.();
        this.#done();
      },
      (error: unknown) => {
        this.#done();
        throw error;
      },
    );
    this.#tail = run;
    return run;
  }

  /** A write's reply was handled; once none is in flight, what the next write expects is what memory holds. */
  #done(): void {
    if (--this.#inFlight > 0) return;
    this.#tail = RESOLVED;
    this.#sentLength = this.#messages.length + this.#compacted;
    this.#sentPending = this.#pending?.stepId;
  }

  /** Sends the records batched, then resolves once every write sent has been answered. */
  #settled(): Promise<void> {
    this.#sendRecords();
    return this.#tail.catch(() => undefined);
  }

  /**
   * Resolves once every write sent has been stored (the messages of an append that resolved early among them).
   *
   * @throws the error of such an append, when Redis refused it.
   */
  async flush(): Promise<void> {
    await this.#settled();
    if (this.#failure !== undefined) throw this.#failure;
  }

  /** Waits for writes in flight and gives a claim up; closes the connection if this context opened it. */
  async close(): Promise<void> {
    await this.#settled();
    const claim = this.#claim;
    this.#claim = undefined;
    await claim?.release();
    if (this.#ownsClient) await closeRedis(this.#redis);
    if (this.#failure !== undefined) throw this.#failure;
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
    if (message.startsWith('OPEN_STEP')) return because('a step is open in the call ledger (its calls started and it is not in the history)');
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
