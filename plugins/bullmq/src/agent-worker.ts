import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { DEFAULT_MAX_STEPS, addUsage, tokenUsage, type AgentRunOptions, type AgentTurnResult, type Kernel, type PendingStep, type TokenUsage } from '@kosong/core';
import { DelayedError, Queue, UnrecoverableError, WaitingError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { DEFAULT_APPROVAL_MAX_AGE_MS, checkSecretOption, secretFor, verifyDecisions, type ApprovalSecretOption } from './approval-signature.js';
import { asUnavailable, closeOrDisconnect, closeRedis, createRedis, isRedisUnavailable, type RedisConnection } from './connection.js';
import { FencedError } from './errors.js';
import { EventPublisher, definePublishCommand } from './event-publisher.js';
import { DEFAULT_PREFIX, GlobalKeys, SessionKeys, TURN_QUEUE } from './keys.js';
import { checkKnownOptions, type KnownOptions } from './options.js';
import { adoptOrphanOutcomes, OrphanToolJobs } from './orphan-tool-jobs.js';
import { planTurn, queuedTurnResult } from './plan-turn.js';
import { RedisContext } from './redis-context.js';
import { SessionLease } from './session-lease.js';
import { fromAgentEvent, serializeError, type QueuedTurnResult, type TerminalTurnEvent } from './turn-events.js';
import { finishTurn, isActive, readTurnJob, type TurnJob } from './turn-job.js';
import { TurnLine } from './turn-line.js';
import { STEP_START_SCRIPT } from './turn-scripts.js';

/** Options of an {@link AgentWorker}. */
export interface AgentWorkerOptions {
  readonly connection: RedisConnection;
  /** The kernel turns run on: `kernel.agent({ tenant })` for each turn's tenant. */
  readonly kernel: Kernel;
  /** Turns run at once, at most (default 4). */
  readonly concurrency?: number;
  /** System prompt of turns that give none (default `''`). */
  readonly systemPrompt?: string;
  /** Steps per turn at most, for turns that give no `maxSteps` (default core's `DEFAULT_MAX_STEPS`, as for an `Agent`). */
  readonly maxSteps?: number;
  /**
   * How long a turn's job lock and its session lease last without renewal (default 30 s, renewed
   * every third to half of it). A worker killed mid-turn is replaced after about this long (plus
   * up to `stalledIntervalMs`).
   */
  readonly lockDurationMs?: number;
  /** How often this worker looks for turns whose worker was lost (default: `lockDurationMs`). */
  readonly stalledIntervalMs?: number;
  /** How many times a turn may be recovered after its worker was lost before it fails (default 3). */
  readonly maxRecoveries?: number;
  /** How long a turn waiting for an earlier turn of its session is put aside before it looks again (default 250 ms). */
  readonly waitTurnMs?: number;
  /** How long tool jobs of an interrupted step get to stop when a turn is recovered (default 10 s). */
  readonly orphanDeadlineMs?: number;
  /** Prefix of every Redis key (default `kosong`). */
  readonly prefix?: string;
  /**
   * How long this worker's commands (sessions, events, leases) wait for Redis to come back before
   * they fail (default 15 s): a turn in flight goes on once Redis is back within it, and fails with
   * a `RedisUnavailableError` past it. Also how long any one of them waits for an answer from a
   * frozen Redis (connected, silent).
   */
  readonly reconnectWindowMs?: number;
  /**
   * The secret approval decisions must be signed with (HMAC-SHA256, at least 16 bytes; the
   * `approvalSecret` of the submitters' `TurnQueue`): one for every tenant, or a function giving
   * each tenant's (`undefined`: that tenant's decisions are all refused). It never goes to Redis.
   *
   * With it, a resumption whose decisions are not signed with the tenant's secret — for its tenant,
   * session and job, the step that waits, and each decided call with the tool and arguments it has
   * in that step — fails with an `ApprovalSignatureError` before anything runs: its calls still
   * wait, and a correctly signed resumption can still decide them. A resumption without decisions
   * needs no signature (it decides nothing). Without a secret, every decision found in Redis is
   * taken as it is: whoever can write to Redis can approve any tenant's calls.
   */
  readonly approvalSecret?: ApprovalSecretOption;
  /** How old a signature may be when its resumption runs (default 1 h): a signature copied later is refused. */
  readonly approvalMaxAgeMs?: number;
}

const AGENT_WORKER_OPTIONS: KnownOptions<AgentWorkerOptions> = {
  connection: true,
  kernel: true,
  concurrency: true,
  systemPrompt: true,
  maxSteps: true,
  lockDurationMs: true,
  stalledIntervalMs: true,
  maxRecoveries: true,
  waitTurnMs: true,
  orphanDeadlineMs: true,
  prefix: true,
  reconnectWindowMs: true,
  approvalSecret: true,
  approvalMaxAgeMs: true,
};

/** The reply a session gets for a turn cancelled before the model answered (see `AgentWorker`). */
export const CANCELLED_REPLY = '[No reply: the turn was cancelled before the model answered.]';

/** Why a running turn was aborted: cancelled, lost (to a zombie check or Redis), or handed over (this worker shuts down). */
type Interruption =
  | { readonly kind: 'cancel'; readonly reason: string }
  | { readonly kind: 'lost'; readonly error: Error }
  | { readonly kind: 'handover'; readonly error: Error };

/** Aborts a running turn. */
type Interrupt = (interruption: Interruption) => void;

/** A running turn's abort signal, and what aborted it: the first interruption is the one that counts. */
class Interruptions {
  readonly #controller = new AbortController();
  #first: Interruption | undefined;

  /** Aborted by the first interruption. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** The first interruption, if there was one. */
  get first(): Interruption | undefined {
    return this.#first;
  }

  /** Aborts the turn, unless an earlier interruption did. */
  readonly interrupt: Interrupt = (interruption) => {
    if (this.#first) return;
    this.#first = interruption;
    this.#controller.abort(interruption.kind === 'cancel' ? new Error(interruption.reason) : interruption.error);
  };
}

/** A turn this worker runs under its session's lease. */
interface HeldTurn {
  readonly turn: TurnJob;
  readonly keys: SessionKeys;
  readonly lease: SessionLease;
  readonly publisher: EventPublisher;
  readonly interruptions: Interruptions;
}

/**
 * Runs queued agent turns: `kernel.agent()` for the turn's tenant, on a `RedisContext` of its
 * session, publishing every event on the turn's stream.
 *
 * - One turn per session at a time, in submission order: a turn whose session has an earlier turn
 *   pending is put aside (delayed) and looked at again; the session lease fences every write.
 * - A turn whose worker died is picked up by another worker after stall detection: the tool jobs of
 *   its interrupted step are cancelled first, then it goes on from its last whole step — and the
 *   step that was interrupted is completed from the session's call ledger, never redone: calls with
 *   a recorded outcome keep it, calls that started without one are resolved by their tool's replay
 *   policy (`'never'`: the model is told the call was interrupted). What a worker does with a turn
 *   it takes is {@link planTurn}'s decision.
 * - `TurnHandle.cancel()` aborts the running step, tools included, on whichever worker runs it.
 */
export class AgentWorker {
  /** This worker's id in events (`host:pid:random`). */
  readonly id = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  readonly #worker: Worker;
  readonly #turnQueue: Queue;
  /** The BullMQ worker's connection (its commands wait through reconnections). */
  readonly #redis: Redis;
  /** Everything else: sessions, leases, events (its commands fail after a few reconnection attempts). */
  readonly #commands: Redis;
  readonly #subscriber: Redis;
  readonly #keys: GlobalKeys;
  readonly #prefix: string;
  readonly #lockDurationMs: number;
  readonly #line: TurnLine;
  readonly #orphans: OrphanToolJobs;
  readonly #running = new Map<string, Interrupt>();
  #started: Promise<void> | undefined;
  #closing: Promise<void> | undefined;

  /** @throws TypeError for an option it does not know, or an approval secret that is no secret. */
  constructor(private readonly options: AgentWorkerOptions) {
    checkKnownOptions('AgentWorker', options, AGENT_WORKER_OPTIONS);
    checkSecretOption(options.approvalSecret, 'AgentWorker');
    this.#prefix = options.prefix ?? DEFAULT_PREFIX;
    this.#keys = new GlobalKeys(this.#prefix);
    this.#lockDurationMs = options.lockDurationMs ?? 30_000;
    this.#redis = createRedis(options.connection, { blocking: true, name: 'kosong-agent-worker' });
    this.#subscriber = createRedis(options.connection, { blocking: true, name: 'kosong-turn-cancel' });
    this.#commands = createRedis(options.connection, {
      blocking: false,
      name: 'kosong-agent-commands',
      ...(options.reconnectWindowMs === undefined ? {} : { reconnectWindowMs: options.reconnectWindowMs }),
    });
    definePublishCommand(this.#commands);
    this.#worker = new Worker(TURN_QUEUE, (job, token, signal) => this.#process(job, token, signal), {
      connection: this.#redis,
      prefix: this.#prefix,
      concurrency: options.concurrency ?? 4,
      lockDuration: this.#lockDurationMs,
      stalledInterval: options.stalledIntervalMs ?? this.#lockDurationMs,
      maxStalledCount: options.maxRecoveries ?? 3,
      autorun: false,
    });
    this.#worker.on('error', () => undefined);
    this.#turnQueue = new Queue(TURN_QUEUE, { connection: this.#commands, prefix: this.#prefix });
    this.#turnQueue.on('error', () => undefined);
    this.#line = new TurnLine(this.#commands, this.#turnQueue);
    this.#orphans = new OrphanToolJobs(this.#commands, this.#keys, options.orphanDeadlineMs ?? 10_000);
  }

  /** Starts taking turns. */
  start(): Promise<void> {
    this.#started ??= (async () => {
      this.#subscriber.on('message', (_channel: string, message: string) => this.#onCancel(message));
      await this.#subscriber.subscribe(this.#keys.turnCancelChannel);
      void this.#worker.run().catch(() => undefined);
      await this.#worker.waitUntilReady();
    })();
    return this.#started;
  }

  /** Turns running on this worker now. */
  get running(): number {
    return this.#running.size;
  }

  #onCancel(message: string): void {
    try {
      const { turnId, reason } = JSON.parse(message) as { turnId?: unknown; reason?: unknown };
      if (typeof turnId === 'string') this.#running.get(turnId)?.({ kind: 'cancel', reason: typeof reason === 'string' ? reason : 'cancelled' });
    } catch {
      // not ours
    }
  }

  /**
   * Runs a turn's job. A failure because Redis stayed unreachable fails the job with a reason that
   * starts with `RedisUnavailableError:` (the submitter's handle reports it as one), never with a
   * raw client error; a job whose data is not a turn's fails at once.
   */
  async #process(job: Job, token: string | undefined, signal: AbortSignal | undefined): Promise<QueuedTurnResult | null> {
    let turn: TurnJob;
    try {
      turn = readTurnJob(job.data);
    } catch (error) {
      throw new UnrecoverableError(`Turn job ${job.id}: ${(error as Error).message}`);
    }
    try {
      return await this.#take(job, turn, token, signal);
    } catch (error) {
      if (!isRedisUnavailable(error) || error instanceof UnrecoverableError) throw error;
      const { name, message } = serializeError(asUnavailable(error, `Turn ${turn.turnId}`));
      throw new UnrecoverableError(`${name}: ${message}`);
    }
  }

  /** Takes a turn: ends it if it was cancelled, puts it aside while its session is busy, else runs it under the session's lease. */
  async #take(job: Job, turn: TurnJob, token: string | undefined, signal: AbortSignal | undefined): Promise<QueuedTurnResult | null> {
    const keys = new SessionKeys(this.#prefix, turn.tenant, turn.session);
    const state = await this.#commands.hgetall(keys.turn(turn.turnId));
    if (state.state === undefined) throw new UnrecoverableError(`Turn ${turn.turnId}: its state is gone from Redis`);
    if (!isActive(state.state)) return state.result ? (JSON.parse(state.result) as QueuedTurnResult) : null;
    if (state.cancel !== undefined) {
      await this.#finish(keys, turn.turnId, undefined, { type: 'turn_cancelled', reason: state.cancel });
      await this.#line.wakeNext(keys);
      return null;
    }
    if (!(await this.#line.isFirst(keys, turn.turnId))) return this.#putAside(job, token);
    const interruptions = new Interruptions();
    const lease = await SessionLease.acquire(this.#commands, keys, this.#lockDurationMs, () =>
      interruptions.interrupt({ kind: 'lost', error: new FencedError(turn.tenant, turn.session, 0) }),
    );
    if (!lease) return this.#putAside(job, token);
    const publisher = new EventPublisher(this.#commands, keys.events(turn.turnId), keys.owner, lease.token, (error) => interruptions.interrupt({ kind: 'lost', error }));
    const held: HeldTurn = { turn, keys, lease, publisher, interruptions };
    this.#running.set(turn.turnId, interruptions.interrupt);
    const onJobLost = (): void => interruptions.interrupt({ kind: 'lost', error: new Error('this worker lost the turn (its job lock expired)') });
    signal?.addEventListener('abort', onJobLost, { once: true });
    try {
      return await this.#runHeld(held, state.ledgerTurn);
    } catch (error) {
      return await this.#afterFailure(held, error, job, token);
    } finally {
      signal?.removeEventListener('abort', onJobLost);
      this.#running.delete(turn.turnId);
      await lease.release();
      await this.#line.wakeNext(keys);
    }
  }

  /** Runs a turn whose session lease this worker holds, unless it was cancelled meanwhile, and ends it. */
  async #runHeld(held: HeldTurn, ledgerTurn: string | undefined): Promise<QueuedTurnResult | null> {
    const { turn, keys, publisher } = held;
    const turnKey = keys.turn(turn.turnId);
    const cancelled = await this.#commands.hget(turnKey, 'cancel');
    if (cancelled !== null) {
      await this.#finish(keys, turn.turnId, publisher, { type: 'turn_cancelled', reason: cancelled });
      return null;
    }
    await this.#commands.hset(turnKey, 'state', 'running');
    const attempt = await this.#commands.hincrby(turnKey, 'attempts', 1);
    const result = await this.#runTurn(held, attempt, ledgerTurn);
    await this.#finish(keys, turn.turnId, publisher, { type: 'turn_end', result });
    return result;
  }

  /**
   * What becomes of a turn that threw: cancelled, it ends so; interrupted otherwise (lost, fenced,
   * handed over), it goes back to the queue; else it fails.
   */
  async #afterFailure(held: HeldTurn, error: unknown, job: Job, token: string | undefined): Promise<null> {
    const { turn, keys, lease, publisher } = held;
    const why = held.interruptions.first;
    if (why?.kind === 'cancel') {
      await this.#replyToCancelledInput(turn, lease);
      await this.#finish(keys, turn.turnId, publisher, { type: 'turn_cancelled', reason: why.reason });
      return null;
    }
    if (why?.kind === 'handover' || why?.kind === 'lost' || FencedError.isInstance(error)) {
      // Back to the queue: a worker goes on from the last whole step, as after a crash. If the job is
      // not ours any more (its lock expired), whoever holds it, or the stalled-job check, does.
      await job.moveToWait(token).catch(() => undefined);
      throw new WaitingError();
    }
    const failure = isRedisUnavailable(error) ? asUnavailable(error, `Turn ${turn.turnId}`) : error;
    try {
      await this.#finish(keys, turn.turnId, publisher, { type: 'turn_failed', error: serializeError(failure) });
    } catch (finishing) {
      // Redis is away for good: the job's failure says it (the submitter's handle reads it from there).
      const reason = isRedisUnavailable(finishing) ? serializeError(asUnavailable(finishing, `Turn ${turn.turnId}`)) : serializeError(failure);
      throw new UnrecoverableError(`${reason.name}: ${reason.message}`);
    }
    throw new UnrecoverableError(serializeError(failure).message);
  }

  /** Runs (or goes on with, or ends) a turn, as {@link planTurn} decides from the session and the job. */
  async #runTurn(held: HeldTurn, attempt: number, ledgerTurn: string | undefined): Promise<QueuedTurnResult> {
    const { turn, keys, lease, publisher } = held;
    // The turn's usage (whole steps), and the running step's once its generation ended: the session records both with the step.
    let usage: TokenUsage = tokenUsage();
    let stepUsage: TokenUsage | undefined;
    const context = new RedisContext({
      connection: this.#commands,
      tenant: turn.tenant,
      session: turn.session,
      prefix: this.#prefix,
      fence: lease.token,
      turn: { id: turn.turnId, usage: () => (stepUsage ? addUsage(usage, stepUsage) : usage) },
    });
    await context.restore();
    const progress = await context.turnProgress();
    const maxSteps = turn.options.maxSteps ?? this.options.maxSteps ?? DEFAULT_MAX_STEPS;
    const plan = planTurn({ ...progress, history: context.history }, context.pendingStep, { ...turn, attempt, ledgerTurn, maxSteps });
    if (plan.kind === 'resume') {
      this.#checkSignature(turn, plan.pending);
      if (plan.ledgerTurn !== undefined) await this.#commands.hset(keys.turn(turn.turnId), 'ledgerTurn', plan.ledgerTurn);
    }
    publisher.publish({ type: 'turn_start', turnId: turn.turnId, worker: this.id, attempt });
    if (attempt > 1) {
      const outcomes = await this.#orphans.cancel(keys, turn.turnId);
      publisher.publish({ type: 'turn_resumed', fromStep: plan.stepOffset + 1, reason: 'the worker running the turn was lost' });
      // A call whose tool finished after its worker was lost: its result is the call's, not "interrupted".
      if (plan.kind !== 'end' && plan.kind !== 'refuse') await adoptOrphanOutcomes(context, outcomes);
    }
    if (plan.kind === 'end') return plan.result;
    if (plan.kind === 'refuse') throw plan.error;
    usage = plan.usage;
    const agent = this.options.kernel.agent({
      ...(turn.tenant === undefined ? {} : { tenant: turn.tenant }),
      ...(turn.options.provider === undefined ? {} : { provider: turn.options.provider }),
      systemPrompt: turn.options.systemPrompt ?? this.options.systemPrompt ?? '',
      maxSteps: plan.agentMaxSteps,
      context,
    });
    const runOptions: AgentRunOptions = {
      signal: held.interruptions.signal,
      ...(turn.options.timeouts === undefined ? {} : { timeouts: turn.options.timeouts }),
      // Where the call ledger's keys go on: the step that a lost worker left open is completed from
      // the ledger (the run's step 1), and each call keeps its idempotency key.
      turn: plan.ledger,
      onEvent: (event) => {
        if (event.type === 'step_end') {
          usage = event.usage ? addUsage(usage, event.usage) : usage;
          stepUsage = undefined;
        }
        publisher.publish(fromAgentEvent(event, plan.stepOffset));
      },
      hooks: [
        this.#stepHooks(held, (generated) => {
          stepUsage = generated ?? stepUsage;
        }),
      ],
    };
    let result: AgentTurnResult;
    if (plan.kind === 'resume') {
      stepUsage = plan.pending.usage; // a resumed step makes no request: its usage is the pending step's
      result = await agent.resume({ ...runOptions, decisions: plan.decisions });
    } else {
      result = await agent.run(plan.input, runOptions);
    }
    await publisher.flush();
    return queuedTurnResult(result, context.pendingStep, plan.stepOffset, usage);
  }

  /**
   * The worker's hooks on every step of a turn: its start is recorded before the provider is called
   * (so that a recovery can cancel its tool jobs) and checked for a cancellation; the usage of its
   * generation goes to `onGenerated`.
   */
  #stepHooks({ turn, keys, lease, interruptions }: HeldTurn, onGenerated: (usage: TokenUsage | undefined) => void): RunHooks {
    return {
      name: 'kosong.bullmq',
      hooks: {
        onStepStart: async (event) => {
          try {
            const cancel = await this.#commands.eval(STEP_START_SCRIPT, 3, keys.meta, keys.owner, keys.turn(turn.turnId), lease.token, `${turn.turnId}\t${event.stepId}`);
            if (typeof cancel === 'string') interruptions.interrupt({ kind: 'cancel', reason: cancel });
          } catch (error) {
            const fenced = error instanceof Error && error.message.includes('FENCED');
            interruptions.interrupt({ kind: 'lost', error: fenced ? new FencedError(turn.tenant, turn.session, lease.token) : (error as Error) });
          }
        },
        onStepEnd: (event) => {
          if (!event.error) onGenerated(event.usage);
        },
      },
    };
  }

  /**
   * With an approval secret: refuses (an `ApprovalSignatureError`, before anything runs) decisions
   * that are not signed with the tenant's secret for this resumption and the step that waits.
   */
  #checkSignature(turn: TurnJob, pending: PendingStep): void {
    const { approvalSecret } = this.options;
    const { decisions, signed } = turn.resume!;
    if (approvalSecret === undefined || Object.keys(decisions).length === 0) return;
    verifyDecisions(secretFor(approvalSecret, turn.tenant, 'AgentWorker'), signed, {
      tenant: turn.tenant,
      session: turn.session,
      turnId: turn.turnId,
      pending,
      decisions,
      maxAgeMs: this.options.approvalMaxAgeMs ?? DEFAULT_APPROVAL_MAX_AGE_MS,
    });
  }

  /**
   * A turn cancelled after its input was added and before the model answered leaves the session
   * ending with that input: the session gets a reply saying so ({@link CANCELLED_REPLY}), so that the
   * next turn reads coherently. A step whose calls started is left as it is: its records are in the
   * call ledger, and the next turn completes it first. Best effort (the turn is cancelled anyway).
   */
  async #replyToCancelledInput(turn: TurnJob, lease: SessionLease): Promise<void> {
    const context = new RedisContext({ connection: this.#commands, tenant: turn.tenant, session: turn.session, prefix: this.#prefix, fence: lease.token });
    try {
      await context.restore();
      if (context.pendingStep !== undefined || context.ledger.openStep !== undefined || context.history.at(-1)?.role !== 'user') return;
      await context.append({ role: 'assistant', content: [{ type: 'text', text: CANCELLED_REPLY }] });
    } catch {
      // the session is as the turn left it: whole steps only
    }
  }

  /** Puts the job aside for a while (it waits for an earlier turn of its session). */
  async #putAside(job: Job, token: string | undefined): Promise<never> {
    await job.moveToDelayed(Date.now() + (this.options.waitTurnMs ?? 250), token);
    throw new DelayedError();
  }

  /** Publishes the terminal event (fenced by the lease when there is a publisher) and marks the turn ended. */
  async #finish(keys: SessionKeys, turnId: string, publisher: EventPublisher | undefined, event: TerminalTurnEvent): Promise<void> {
    // Published after the turn's other events (fenced); and written with the state, in one script, if
    // it is not on the stream then (a publisher that failed, or whose write a Redis restart cut off).
    if (publisher) {
      publisher.publish(event);
      await publisher.flush();
    }
    await finishTurn(this.#commands, keys, turnId, event);
  }

  /**
   * Stops taking turns and lets running ones finish; those still running after `deadlineMs` (default
   * 10 s) are stopped and put back in the queue, for another worker to go on from their last whole step.
   */
  close(options: { readonly deadlineMs?: number } = {}): Promise<void> {
    this.#closing ??= (async () => {
      const deadline = setTimeout(() => {
        for (const interrupt of this.#running.values()) interrupt({ kind: 'handover', error: new Error('the agent worker is shutting down') });
      }, options.deadlineMs ?? 10_000);
      try {
        await closeOrDisconnect(this.#worker, (options.deadlineMs ?? 10_000) + 5_000);
      } finally {
        clearTimeout(deadline);
        await Promise.all([this.#orphans.close(), closeOrDisconnect(this.#turnQueue)]);
        await Promise.all([closeRedis(this.#subscriber), closeRedis(this.#commands), closeRedis(this.#redis)]);
      }
    })();
    return this.#closing;
  }
}

/** One entry of a run's `hooks`. */
type RunHooks = NonNullable<AgentRunOptions['hooks']>[number];
