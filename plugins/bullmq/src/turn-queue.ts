import { randomUUID } from 'node:crypto';
import {
  NoPendingApprovalError,
  isApprovalDecision,
  pendingApprovals,
  textPart,
  type ApprovalDecision,
  type Message,
  type PendingApproval,
} from '@kosong/core';
import { pendingStepFromJSON } from '@kosong/core/context-kit';
import { Job, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { callsOf, checkSecretOption, secretFor, signDecisions, type ApprovalSecretOption, type SignedCall, type SignedDecisions } from './approval-signature.js';
import { asUnavailable, closeOrDisconnect, closeRedis, createRedis, isRedisUnavailable, type RedisConnection } from './connection.js';
import { RedisUnavailableError, TurnCancelledError, TurnFailedError } from './errors.js';
import { DEFAULT_PREFIX, GlobalKeys, SessionKeys, TURN_QUEUE } from './keys.js';
import { checkKnownOptions, type KnownOptions } from './options.js';
import { isTerminalTurnEvent, type QueuedTurnResult, type TerminalTurnEvent, type TurnEvent } from './turn-events.js';
import { reviveError } from './typed-errors.js';
import { checkTurnOptions, finishTurn, isActive, submitTurn, type TurnOptions, type TurnResume } from './turn-job.js';

/** The name of {@link RedisUnavailableError} in turn events and job failures. */
const UNAVAILABLE = 'RedisUnavailableError';

/** How long one read of a turn's events blocks in Redis waiting for a new one (ms). */
const READ_BLOCK_MS = 1_000;

/** What {@link TurnQueue.submit} takes. */
export interface TurnSubmission {
  /** The tenant whose toolset, provider and hooks the turn runs with (it must be defined on the workers). */
  readonly tenant?: string;
  /** The session: its history is the turn's context; its turns run one at a time, in submission order. */
  readonly session: string;
  /** The user's message (text), or messages. */
  readonly input: string | Message | readonly Message[];
  /** The turn's system prompt, step limit and provider (each left out: the worker's). */
  readonly options?: TurnOptions;
}

/** What {@link TurnQueue.resume} takes. */
export interface TurnResumption {
  /** The tenant of the session. */
  readonly tenant?: string;
  /** The session whose last turn ended with `approval_required`. */
  readonly session: string;
  /**
   * Decisions about the calls that wait, by tool call id. A call without one is asked of the worker
   * kernel's `ApprovalHandler` (if it has one), or stays waiting: the turn then ends with
   * `approval_required` again.
   */
  readonly decisions: Readonly<Record<string, ApprovalDecision>>;
  /**
   * The calls the decisions are about, as the submitter was shown them: the `pendingApprovals` of
   * the turn that ended with `approval_required`. With an approval secret, the signature covers
   * these calls (tool and arguments), so a call changed in Redis after it was shown is refused by
   * the worker. Without them the queue signs the calls that wait in Redis when `resume` is called;
   * they are required (with a secret and decisions) while earlier turns of the session are still
   * queued or running, since the step that will wait is not known yet.
   */
  readonly pendingApprovals?: readonly PendingApproval[];
  /** The resumed turn's system prompt, step limit and provider (each left out: the worker's). */
  readonly options?: TurnOptions;
}

const SUBMISSION_OPTIONS: KnownOptions<TurnSubmission> = { tenant: true, session: true, input: true, options: true };
const RESUMPTION_OPTIONS: KnownOptions<TurnResumption> = { tenant: true, session: true, decisions: true, pendingApprovals: true, options: true };

/** Options of a {@link TurnQueue}. */
export interface TurnQueueOptions {
  readonly connection: RedisConnection;
  /** Prefix of every Redis key (default `kosong`). */
  readonly prefix?: string;
  /**
   * How long a turn's events may stay unreadable (Redis unreachable) before `events()` and
   * `result()` fail with a {@link RedisUnavailableError} (default 10 s; a frozen Redis: this plus
   * the 1 s a read blocks).
   */
  readonly unavailableAfterMs?: number;
  /** How long `submit`, `resume` and `cancel` wait for Redis to come back, or a frozen one to answer, before they fail with a {@link RedisUnavailableError} (default 15 s). */
  readonly reconnectWindowMs?: number;
  /**
   * The secret `resume` signs its decisions with (HMAC-SHA256; at least 16 bytes), the same as the
   * agent workers' `approvalSecret` — one for every tenant, or a function giving each tenant's. It
   * never goes to Redis. Workers with a secret refuse decisions that are not signed with it.
   */
  readonly approvalSecret?: ApprovalSecretOption;
}

const TURN_QUEUE_OPTIONS: KnownOptions<TurnQueueOptions> = { connection: true, prefix: true, unavailableAfterMs: true, reconnectWindowMs: true, approvalSecret: true };

/**
 * Submits agent turns to the `AgentWorker`s of a Redis, and follows them.
 *
 * @example
 * const turns = new TurnQueue({ connection: 'redis://redis:6379' });
 * const turn = await turns.submit({ tenant: 'acme', session: 'chat-42', input: 'What changed?' });
 * for await (const event of turn.events()) render(event);
 * const { message, usage } = await turn.result();
 */
export class TurnQueue {
  readonly #redis: Redis;
  readonly #queue: Queue;
  readonly #keys: GlobalKeys;
  readonly #handles = new Set<TurnHandle>();
  #closed = false;

  /** @throws TypeError for an option it does not know, or an approval secret that is no secret. */
  constructor(private readonly options: TurnQueueOptions) {
    checkKnownOptions('TurnQueue', options, TURN_QUEUE_OPTIONS);
    checkSecretOption(options.approvalSecret, 'TurnQueue');
    this.#redis = createRedis(options.connection, {
      blocking: false,
      name: 'kosong-turn-queue',
      ...(options.reconnectWindowMs === undefined ? {} : { reconnectWindowMs: options.reconnectWindowMs }),
    });
    this.#keys = new GlobalKeys(options.prefix ?? DEFAULT_PREFIX);
    this.#queue = new Queue(TURN_QUEUE, { connection: this.#redis, prefix: options.prefix ?? DEFAULT_PREFIX });
    this.#queue.on('error', () => undefined);
  }

  /**
   * Queues a turn. It runs after every turn submitted before it for the same session has ended.
   * @throws `TypeError` for a bad submission; an error when Redis is unreachable.
   */
  async submit(submission: TurnSubmission): Promise<TurnHandle> {
    checkKnownOptions('TurnQueue.submit', submission, SUBMISSION_OPTIONS);
    return this.#enqueue(randomUUID(), submission.tenant, submission.session, toMessages(submission.input), submission.options ?? {}, undefined);
  }

  /**
   * Queues the resumption of a session whose last turn ended with `stopReason: 'approval_required'`
   * (in submission order with the session's other turns): a worker completes the waiting step with
   * these decisions — approved calls run, denied ones go back to the model — and the turn goes on.
   * Its events and result are a turn's (steps counted from the turn it goes on with).
   *
   * The decisions are checked as `Agent.resume` checks them: when no earlier turn of the session is
   * still queued or running, against the step that waits now (before anything is queued); else, by
   * the worker, against the step that waits when the resumption runs (its turn then fails with
   * `NoPendingApprovalError`).
   *
   * With an `approvalSecret`, the decisions (unless there are none) are signed for this tenant,
   * session and resumption, the waiting step and the calls decided about (see
   * {@link TurnResumption.pendingApprovals}): a worker with the secret runs nothing on decisions it
   * did not sign, and fails the turn with `ApprovalSignatureError` instead (the calls still wait).
   *
   * @throws `TypeError` for a bad resumption or a value that is no decision, and (with a secret)
   *   for decisions it cannot sign: earlier turns still pending and no `pendingApprovals`, a
   *   decision about a call that is not among them, or no secret for the tenant;
   *   `NoPendingApprovalError` when nothing waits in the session, or a decision names a call that
   *   does not wait; {@link RedisUnavailableError} when Redis is unreachable.
   */
  async resume(resumption: TurnResumption): Promise<TurnHandle> {
    checkKnownOptions('TurnQueue.resume', resumption, RESUMPTION_OPTIONS);
    const { tenant, session, decisions } = resumption;
    if (typeof decisions !== 'object' || decisions === null || Array.isArray(decisions)) throw new TypeError('decisions must be an object of decisions by tool call id');
    for (const [id, decision] of Object.entries(decisions)) {
      if (!isApprovalDecision(decision)) throw new TypeError(`the decision for "${id}" is not an approval decision ({ type: 'approve' | 'deny' | 'defer' })`);
    }
    this.#checkOpen();
    checkSession(tenant, session);
    const shown = resumption.pendingApprovals === undefined ? undefined : shownStep(resumption.pendingApprovals);
    const waiting = await this.#checkDecisions(tenant, session, decisions);
    const where = `Session "${session}"${tenant === undefined ? '' : ` of tenant "${tenant}"`}`;
    if (shown && waiting && shown.stepId !== waiting.stepId) {
      throw new NoPendingApprovalError(`${where}: the calls given were deferred in step ${shown.stepId}, and step ${waiting.stepId} waits; nothing was queued`);
    }
    const turnId = randomUUID();
    let signed: SignedDecisions | undefined;
    if (this.options.approvalSecret !== undefined && Object.keys(decisions).length > 0) {
      const secret = secretFor(this.options.approvalSecret, tenant, 'TurnQueue');
      if (!secret) throw new TypeError(`TurnQueue.resume: ${where}: approvalSecret gives no secret for this tenant, so its decisions cannot be signed`);
      const step = shown ?? waiting;
      if (!step) {
        throw new TypeError(
          `TurnQueue.resume: ${where}: earlier turns of the session are still queued or running, so the step that will wait is not known here; pass the pendingApprovals of the turn that ended with approval_required to sign the decisions`,
        );
      }
      signed = signDecisions(secret, { tenant, session, turnId, stepId: step.stepId, decisions, calls: step.calls });
    }
    return this.#enqueue(turnId, tenant, session, [], resumption.options ?? {}, { decisions, ...(signed ? { signed } : {}) });
  }

  /**
   * Checks decisions against the step that waits in the session, unless an earlier turn may still
   * change it; returns that step's id and calls (`undefined` when earlier turns are still pending).
   */
  async #checkDecisions(tenant: string | undefined, session: string, decisions: Readonly<Record<string, ApprovalDecision>>): Promise<WaitingStep | undefined> {
    const keys = this.#sessionKeys(tenant, session);
    let stored: [number, string | null];
    try {
      const read = await this.#redis.multi().zcard(keys.pending).hget(keys.meta, 'pendingStep').exec();
      stored = (read ?? []).map(([error, value]) => {
        if (error) throw error;
        return value;
      }) as [number, string | null];
    } catch (error) {
      throw asUnavailable(error, 'Cannot resume the turn');
    }
    const [turnsAhead, encoded] = stored;
    if (turnsAhead > 0) return undefined; // the worker checks them when the resumption's turn comes
    const where = `Session "${session}"${tenant === undefined ? '' : ` of tenant "${tenant}"`}`;
    if (encoded === null) throw new NoPendingApprovalError(`${where}: no step waits for approval, there is nothing to resume`);
    const pending = pendingStepFromJSON(JSON.parse(encoded));
    const waiting = pendingApprovals(pending).map((p) => p.toolCall.id);
    for (const id of Object.keys(decisions)) {
      if (!waiting.includes(id)) throw new NoPendingApprovalError(`${where}: no call with id "${id}" waits for approval (waiting: ${waiting.join(', ')}); nothing was queued`);
    }
    return { stepId: pending.stepId, calls: callsOf(pending.message.toolCalls ?? []) };
  }

  async #enqueue(turnId: string, tenant: string | undefined, session: string, input: readonly Message[], options: TurnOptions, resume: TurnResume | undefined): Promise<TurnHandle> {
    this.#checkOpen();
    checkSession(tenant, session);
    checkTurnOptions(options);
    try {
      await submitTurn(this.#redis, this.#queue, this.#sessionKeys(tenant, session), { turnId, tenant, session, input, options, ...(resume ? { resume } : {}) });
    } catch (error) {
      throw asUnavailable(error, 'Cannot submit the turn');
    }
    return this.handle(turnId, tenant, session);
  }

  /** A handle on a turn submitted earlier (by this process or another). */
  handle(turnId: string, tenant: string | undefined, session: string): TurnHandle {
    this.#checkOpen();
    const handle = new TurnHandle(turnId, tenant, session, {
      redis: this.#redis,
      queue: this.#queue,
      globalKeys: this.#keys,
      keys: this.#sessionKeys(tenant, session),
      connection: this.options.connection,
      unavailableAfterMs: this.options.unavailableAfterMs ?? 10_000,
    });
    this.#handles.add(handle);
    return handle;
  }

  /** Stops following turns (their `events()` end) and closes the connections. Turns go on running. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.all([...this.#handles].map((h) => h.detach()));
    await closeOrDisconnect(this.#queue);
    await closeRedis(this.#redis);
  }

  #sessionKeys(tenant: string | undefined, session: string): SessionKeys {
    return new SessionKeys(this.options.prefix ?? DEFAULT_PREFIX, tenant, session);
  }

  #checkOpen(): void {
    if (this.#closed) throw new Error('The TurnQueue is closed');
  }
}

/** What a handle needs of its queue. @internal */
interface HandleDeps {
  readonly redis: Redis;
  readonly queue: Queue;
  readonly globalKeys: GlobalKeys;
  readonly keys: SessionKeys;
  readonly connection: RedisConnection;
  readonly unavailableAfterMs: number;
}

/** A submitted turn: its events (live, from the start), its result, and a way to cancel it. */
export class TurnHandle {
  readonly #deps: HandleDeps;
  readonly #readers = new Set<Redis>();
  #result: Promise<QueuedTurnResult> | undefined;
  #detached = false;

  /** @internal Made by `TurnQueue`. */
  constructor(
    readonly turnId: string,
    readonly tenant: string | undefined,
    readonly session: string,
    deps: HandleDeps,
  ) {
    this.#deps = deps;
  }

  /**
   * The turn's events from its first one, then live, ending after its terminal event
   * (`turn_end`, `turn_failed` or `turn_cancelled`). Each call reads from the start again.
   *
   * @throws {RedisUnavailableError} when Redis stays unreachable past `unavailableAfterMs`, or lost the turn.
   */
  async *events(options: { readonly signal?: AbortSignal } = {}): AsyncGenerator<TurnEvent, void, undefined> {
    const { keys, connection, unavailableAfterMs } = this.#deps;
    // Its reads wait for Redis to come back for `unavailableAfterMs`, then fail: the events are then unreadable for good.
    const reader = createRedis(connection, { blocking: false, name: 'kosong-turn-reader', reconnectWindowMs: unavailableAfterMs, commandTimeoutMs: unavailableAfterMs + READ_BLOCK_MS });
    this.#readers.add(reader);
    const stream = keys.events(this.turnId);
    let lastId = '0-0';
    let failingSince: number | undefined;
    try {
      for (;;) {
        if (this.#detached || options.signal?.aborted) return;
        let entries: [string, string[]][] | undefined;
        const readAt = Date.now();
        try {
          const read = (await reader.xread('COUNT', 200, 'BLOCK', READ_BLOCK_MS, 'STREAMS', stream, lastId)) as [string, [string, string[]][]][] | null;
          entries = read?.[0]?.[1];
          failingSince = undefined;
        } catch (error) {
          if (this.#detached) return;
          failingSince ??= readAt;
          if (isRedisUnavailable(error) || Date.now() - failingSince > unavailableAfterMs) {
            throw new RedisUnavailableError(`Turn ${this.turnId}: Redis has been unreachable for ${Math.round((Date.now() - failingSince) / 1000)} s (${(error as Error).message})`, { cause: error });
          }
          await new Promise((resolve) => setTimeout(resolve, 200));
          continue;
        }
        if (!entries || entries.length === 0) {
          const synthetic = await this.#checkAlive(reader, stream, lastId);
          if (synthetic) {
            yield synthetic;
            return;
          }
          continue;
        }
        for (const [id, fields] of entries) {
          lastId = id;
          const event = JSON.parse(fields[1]!) as TurnEvent;
          yield event;
          if (isTerminalTurnEvent(event)) return;
        }
      }
    } finally {
      this.#readers.delete(reader);
      await closeRedis(reader);
    }
  }

  /**
   * When no event comes: is the turn still there? A turn whose job failed without a terminal event
   * (its workers kept dying) gets a `turn_failed`; a turn Redis no longer knows is an error.
   */
  async #checkAlive(reader: Redis, stream: string, lastId: string): Promise<TurnEvent | undefined> {
    const { keys, queue } = this.#deps;
    const [state, result] = await reader.hmget(keys.turn(this.turnId), 'state', 'result').catch(() => [null, null]);
    if (state !== null) {
      // Ended: its terminal event is on the stream (the finish script writes it with the state), and
      // the next read gets it. A stream that has nothing more (written by a version that could lose
      // it) ends with the result the state holds, rather than being waited on for ever.
      if (!isActive(state)) return (await this.#hasMore(reader, stream, lastId)) ? undefined : endedEvent(state, result);
      const job = await Job.fromId(queue, this.turnId).catch(() => undefined);
      if (job?.failedReason && job.finishedOn !== undefined) {
        const unavailable = job.failedReason.startsWith(`${UNAVAILABLE}: `);
        return {
          type: 'turn_failed',
          error: unavailable ? { name: UNAVAILABLE, message: job.failedReason.slice(UNAVAILABLE.length + 2) } : { name: 'TurnFailedError', message: `the turn's job failed: ${job.failedReason}` },
        };
      }
      return undefined;
    }
    const ping = await reader.ping().catch(() => undefined);
    if (ping === undefined) return undefined; // unreachable: the read loop times out on its own
    throw new RedisUnavailableError(`Turn ${this.turnId}: Redis no longer knows this turn (was it restarted without persistence?)`);
  }

  /** Whether the stream has entries after `lastId` (read without waiting; `true` when Redis does not answer: the read loop goes on). */
  async #hasMore(reader: Redis, stream: string, lastId: string): Promise<boolean> {
    const read = (await reader.xread('COUNT', 1, 'STREAMS', stream, lastId).catch(() => 'unknown')) as unknown[] | null | 'unknown';
    return read !== null;
  }

  /**
   * The turn's result.
   * @throws {TurnFailedError}, {@link TurnCancelledError}; {@link RedisUnavailableError} when Redis
   *   stays unreachable past `unavailableAfterMs` here, or the turn failed on its worker because
   *   Redis stayed unreachable there.
   */
  result(): Promise<QueuedTurnResult> {
    this.#result ??= (async () => {
      for await (const event of this.events()) {
        if (event.type === 'turn_end') return event.result;
        if (event.type === 'turn_failed' && event.error.name === UNAVAILABLE) throw new RedisUnavailableError(`Turn ${this.turnId} failed on its worker: ${event.error.message}`);
        if (event.type === 'turn_failed') {
          const cause = reviveError(event.error.name, event.error.details);
          throw new TurnFailedError(this.turnId, event.error.message, event.error.name, cause === undefined ? undefined : { cause });
        }
        if (event.type === 'turn_cancelled') throw new TurnCancelledError(this.turnId, event.reason);
      }
      throw new Error(`Turn ${this.turnId}: stopped following it before it ended (the TurnQueue was closed)`);
    })();
    return this.#result;
  }

  /**
   * Cancels the turn: a turn still waiting is removed from the queue; a running one is aborted on its
   * worker (its running tools included, wherever they run), and nothing of the unfinished step is
   * kept. Resolves once the cancellation is sent; `result()` then rejects with {@link TurnCancelledError}.
   */
  async cancel(reason = 'cancelled by the submitter'): Promise<void> {
    try {
      await this.#cancel(reason);
    } catch (error) {
      throw asUnavailable(error, `Cannot cancel turn ${this.turnId}`);
    }
  }

  async #cancel(reason: string): Promise<void> {
    const { redis, queue, keys, globalKeys } = this.#deps;
    const turnKey = keys.turn(this.turnId);
    await redis.hset(turnKey, 'cancel', reason);
    const state = await redis.hget(turnKey, 'state');
    if (!isActive(state)) return; // ended already
    if (state === 'queued' && (await queue.remove(this.turnId)) === 1) {
      const event: TerminalTurnEvent = { type: 'turn_cancelled', reason };
      await finishTurn(redis, keys, this.turnId, event); // the event on the stream with the state
      return;
    }
    await redis.publish(globalKeys.turnCancelChannel, JSON.stringify({ turnId: this.turnId, reason }));
  }

  /** @internal Ends the live reads (the queue is closing). */
  async detach(): Promise<void> {
    this.#detached = true;
    await Promise.all([...this.#readers].map((r) => closeRedis(r)));
  }
}

/** A step whose calls wait, as a submitter signs decisions about them. */
interface WaitingStep {
  readonly stepId: string;
  readonly calls: readonly SignedCall[];
}

/**
 * The step and calls of a turn's `pendingApprovals`.
 * @throws TypeError when they are not of one step.
 */
function shownStep(approvals: readonly PendingApproval[]): WaitingStep {
  if (!Array.isArray(approvals)) throw new TypeError('pendingApprovals must be the pendingApprovals of a turn result');
  const steps = new Set(approvals.map((a) => a?.stepId));
  const [stepId] = steps;
  if (steps.size !== 1 || typeof stepId !== 'string') throw new TypeError('pendingApprovals must be calls of one step (the pendingApprovals of one turn result)');
  return { stepId, calls: callsOf(approvals.map((a) => a.toolCall)) };
}

/** @throws TypeError for a tenant or session that is not a non-empty string. */
function checkSession(tenant: string | undefined, session: string): void {
  if (tenant !== undefined && (typeof tenant !== 'string' || tenant === '')) throw new TypeError('tenant must be a non-empty string');
  if (typeof session !== 'string' || session === '') throw new TypeError('session must be a non-empty string');
}

function toMessages(input: TurnSubmission['input']): readonly Message[] {
  if (typeof input === 'string') {
    if (input === '') throw new TypeError('input must not be empty');
    return [{ role: 'user', content: [textPart(input)] }];
  }
  const list = Array.isArray(input) ? (input as readonly Message[]) : [input as Message];
  if (list.length === 0) throw new TypeError('input must hold at least one message');
  for (const message of list) {
    if (typeof message !== 'object' || message === null || typeof message.role !== 'string') throw new TypeError('input must be a string or messages');
  }
  return list;
}

/** The terminal event of a turn that ended as `state` with `result` stored (see `finishTurn`). */
function endedEvent(state: string, result: string | null): TurnEvent {
  try {
    if (result !== null) {
      const stored = JSON.parse(result) as unknown;
      if (state === 'done') return { type: 'turn_end', result: stored as QueuedTurnResult };
      if (typeof stored === 'object' && stored !== null && isTerminalTurnEvent(stored as TurnEvent)) return stored as TurnEvent;
    }
  } catch {
    // not JSON: said below
  }
  return { type: 'turn_failed', error: { name: 'TurnFailedError', message: `the turn ended (${state}) but its result is not readable` } };
}
