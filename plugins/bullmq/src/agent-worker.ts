import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import {
  NoPendingApprovalError,
  addUsage,
  pendingApprovals,
  tokenUsage,
  type AgentRunOptions,
  type AgentTurnResult,
  type ApprovalDecision,
  type Kernel,
  type Message,
  type PendingStep,
  type TokenUsage,
} from '@kosong/core';
import { DelayedError, Job, Queue, UnrecoverableError, WaitingError, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { DEFAULT_APPROVAL_MAX_AGE_MS, checkSecretOption, secretFor, verifyDecisions, type ApprovalSecretOption } from './approval-signature.js';
import { asUnavailable, closeOrDisconnect, closeRedis, createRedis, isRedisUnavailable, type RedisConnection } from './connection.js';
import { FencedError } from './errors.js';
import { DEFAULT_PREFIX, GlobalKeys, SessionKeys, TURN_QUEUE } from './keys.js';
import { checkKnownOptions, type KnownOptions } from './options.js';
import { RedisContext } from './redis-context.js';
import { PUBLISH_SCRIPT } from './scripts.js';
import { SessionLease } from './session-lease.js';
import { cancelToolJobAndWait } from './tool-job-canceller.js';
import { fromAgentEvent, serializeError, type QueuedTurnResult, type TurnEvent } from './turn-events.js';
import { TURN_TTL_SECONDS, type TurnJobData } from './turn-queue.js';
import { FINISH_SCRIPT, STEP_START_SCRIPT } from './turn-scripts.js';

/** Options of an {@link AgentWorker}. */
export interface AgentWorkerOptions {
  readonly connection: RedisConnection;
  /** The kernel turns run on: `kernel.agent({ tenant })` for each turn's tenant. */
  readonly kernel: Kernel;
  /** Turns run at once, at most (default 4). */
  readonly concurrency?: number;
  /** System prompt of turns that give none (default `''`). */
  readonly systemPrompt?: string;
  /** Steps per turn at most, for turns that give no `maxSteps` (default 25). */
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
   * a `RedisUnavailableError` past it.
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

/** The name of the event-publishing script on the worker's connection. */
const PUBLISH_COMMAND = 'kosongPublishTurnEvent';

/** Events are trimmed to about this many per turn. */
const MAX_EVENTS_PER_TURN = 100_000;

/** Why a running turn was aborted: cancelled, lost (to a zombie check or Redis), or handed over (this worker shuts down). */
type Interruption =
  | { readonly kind: 'cancel'; readonly reason: string }
  | { readonly kind: 'lost'; readonly error: Error }
  | { readonly kind: 'handover'; readonly error: Error };

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
 *   policy (`'never'`: the model is told the call was interrupted).
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
  readonly #running = new Map<string, (interruption: Interruption) => void>();
  readonly #toolQueues = new Map<string, Queue>();
  #started: Promise<void> | undefined;
  #closing: Promise<void> | undefined;

  /** @throws TypeError for an option it does not know, or an approval secret that is no secret. */
  constructor(private readonly options: AgentWorkerOptions) {
    checkKnownOptions('AgentWorker', options, AGENT_WORKER_OPTIONS);
    checkSecretOption(options.approvalSecret, 'AgentWorker');
    this.#prefix = options.prefix ?? DEFAULT_PREFIX;
    this.#keys = new GlobalKeys(this.#prefix);
    this.#redis = createRedis(options.connection, { blocking: true, name: 'kosong-agent-worker' });
    this.#subscriber = createRedis(options.connection, { blocking: true, name: 'kosong-turn-cancel' });
    this.#commands = createRedis(options.connection, {
      blocking: false,
      name: 'kosong-agent-commands',
      ...(options.reconnectWindowMs === undefined ? {} : { reconnectWindowMs: options.reconnectWindowMs }),
    });
    // Events are the hot path (one per streamed part): sent as EVALSHA, not the whole script each time.
    this.#commands.defineCommand(PUBLISH_COMMAND, { numberOfKeys: 2, lua: PUBLISH_SCRIPT });
    const lockDuration = options.lockDurationMs ?? 30_000;
    this.#worker = new Worker(TURN_QUEUE, (job, token, signal) => this.#process(job as Job<TurnJobData>, token, signal), {
      connection: this.#redis,
      prefix: this.#prefix,
      concurrency: options.concurrency ?? 4,
      lockDuration,
      stalledInterval: options.stalledIntervalMs ?? lockDuration,
      maxStalledCount: options.maxRecoveries ?? 3,
      autorun: false,
    });
    this.#worker.on('error', () => undefined);
    this.#turnQueue = new Queue(TURN_QUEUE, { connection: this.#commands, prefix: this.#prefix });
    this.#turnQueue.on('error', () => undefined);
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
   * raw client error.
   */
  async #process(job: Job<TurnJobData>, token: string | undefined, signal: AbortSignal | undefined): Promise<QueuedTurnResult | null> {
    try {
      return await this.#take(job, token, signal);
    } catch (error) {
      if (!isRedisUnavailable(error) || error instanceof UnrecoverableError) throw error;
      const { name, message } = serializeError(asUnavailable(error, `Turn ${job.data.turnId}`));
      throw new UnrecoverableError(`${name}: ${message}`);
    }
  }

  async #take(job: Job<TurnJobData>, token: string | undefined, signal: AbortSignal | undefined): Promise<QueuedTurnResult | null> {
    const data = job.data;
    const keys = new SessionKeys(this.#prefix, data.tenant ?? undefined, data.session);
    const turnKey = keys.turn(data.turnId);
    const state = await this.#commands.hgetall(turnKey);
    if (state.state === undefined) throw new UnrecoverableError(`Turn ${data.turnId}: its state is gone from Redis`);
    if (state.state !== 'queued' && state.state !== 'running') return state.result ? (JSON.parse(state.result) as QueuedTurnResult) : null;
    if (state.cancel !== undefined) {
      await this.#finish(keys, data.turnId, undefined, { type: 'turn_cancelled', reason: state.cancel });
      await this.#promoteNext(keys);
      return null;
    }
    if (!(await this.#isFirstInLine(keys, data.turnId))) return this.#putAside(job, token);
    const interrupted: { value: Interruption | undefined } = { value: undefined };
    const controller = new AbortController();
    const interrupt = (interruption: Interruption): void => {
      if (interrupted.value) return;
      interrupted.value = interruption;
      controller.abort(interruption.kind === 'cancel' ? new Error(interruption.reason) : interruption.error);
    };
    const lease = await SessionLease.acquire(this.#commands, keys, this.options.lockDurationMs ?? 30_000, () =>
      interrupt({ kind: 'lost', error: new FencedError(data.tenant ?? undefined, data.session, 0) }),
    );
    if (!lease) return this.#putAside(job, token);
    this.#running.set(data.turnId, interrupt);
    const onJobLost = (): void => interrupt({ kind: 'lost', error: new Error('this worker lost the turn (its job lock expired)') });
    signal?.addEventListener('abort', onJobLost, { once: true });
    const publisher = new EventPublisher(this.#commands, keys.events(data.turnId), keys.owner, lease.token, (error) => interrupt({ kind: 'lost', error }));
    try {
      const cancelled = await this.#commands.hget(turnKey, 'cancel');
      if (cancelled !== null) {
        await this.#finish(keys, data.turnId, publisher, { type: 'turn_cancelled', reason: cancelled });
        return null;
      }
      await this.#commands.hset(turnKey, 'state', 'running');
      const attempt = await this.#commands.hincrby(turnKey, 'attempts', 1);
      const result = await this.#runTurn(data, keys, lease, publisher, attempt, state.ledgerTurn, controller.signal, interrupt);
      await this.#finish(keys, data.turnId, publisher, { type: 'turn_end', result });
      return result;
    } catch (error) {
      const why = interrupted.value;
      if (why?.kind === 'cancel') {
        await this.#replyToCancelledInput(data, lease);
        await this.#finish(keys, data.turnId, publisher, { type: 'turn_cancelled', reason: why.reason });
        return null;
      }
      if (why?.kind === 'handover' || why?.kind === 'lost' || FencedError.isInstance(error)) {
        // Back to the queue: a worker goes on from the last whole step, as after a crash. If the job is
        // not ours any more (its lock expired), whoever holds it, or the stalled-job check, does.
        await job.moveToWait(token).catch(() => undefined);
        throw new WaitingError();
      }
      const failure = isRedisUnavailable(error) ? asUnavailable(error, `Turn ${data.turnId}`) : error;
      try {
        await this.#finish(keys, data.turnId, publisher, { type: 'turn_failed', error: serializeError(failure) });
      } catch (finishing) {
        // Redis is away for good: the job's failure says it (the submitter's handle reads it from there).
        const reason = isRedisUnavailable(finishing) ? serializeError(asUnavailable(finishing, `Turn ${data.turnId}`)) : serializeError(failure);
        throw new UnrecoverableError(`${reason.name}: ${reason.message}`);
      }
      throw new UnrecoverableError(serializeError(failure).message);
    } finally {
      signal?.removeEventListener('abort', onJobLost);
      this.#running.delete(data.turnId);
      await lease.release();
      await this.#promoteNext(keys);
    }
  }

  async #runTurn(
    data: TurnJobData,
    keys: SessionKeys,
    lease: SessionLease,
    publisher: EventPublisher,
    attempt: number,
    ledgerTurn: string | undefined,
    signal: AbortSignal,
    interrupt: (interruption: Interruption) => void,
  ): Promise<QueuedTurnResult> {
    let usage: TokenUsage = tokenUsage();
    let stepUsage: TokenUsage | undefined;
    const context = new RedisContext({
      connection: this.#commands,
      tenant: data.tenant ?? undefined,
      session: data.session,
      prefix: this.#prefix,
      fence: lease.token,
      turn: { id: data.turnId, usage: () => (stepUsage ? addUsage(usage, stepUsage) : usage) },
    });
    await context.restore();
    const progress = await context.turnProgress();
    const resumed = progress.turn === data.turnId;
    const pending = context.pendingStep;
    // A resumption completes the waiting step of the turn that deferred it, and goes on with that turn:
    // its steps and usage go on from that turn's (the pending step's number is its agent's own count).
    const resuming = data.resume !== undefined && pending !== undefined && !resumed;
    if (resuming) this.#checkSignature(data, pending);
    if ((resumed || resuming) && progress.usage) usage = progress.usage as TokenUsage;
    const stepsDone = resuming ? progress.steps + 1 - pending.step : resumed ? progress.steps : 0;
    // The turn the call ledger keys this turn's steps under (step n of the turn: `{session}/{id}/{n}`):
    // a resumption goes on with the turn that deferred the step, also when it is taken over later.
    const turnIdentity = { id: resuming ? (pending.turn?.id ?? data.turnId) : (ledgerTurn ?? data.turnId), stepsBefore: stepsDone };
    if (resuming && turnIdentity.id !== data.turnId) await this.#commands.hset(keys.turn(data.turnId), 'ledgerTurn', turnIdentity.id);
    publisher.publish({ type: 'turn_start', turnId: data.turnId, worker: this.id, attempt });
    if (attempt > 1) {
      await this.#cancelOrphans(keys, data.turnId);
      publisher.publish({ type: 'turn_resumed', fromStep: stepsDone + 1, reason: 'the worker running the turn was lost' });
    }
    const maxSteps = data.options.maxSteps ?? this.options.maxSteps ?? 25;
    if (pending && resumed) {
      // This turn deferred calls, and its worker was lost before it said so: it ends as it did.
      return approvalRequired(pending, progress.steps + 1, usage);
    }
    if (data.resume !== undefined && !pending && !resumed) {
      throw new NoPendingApprovalError(`Session "${data.session}": no step waits for approval, there is nothing to resume`);
    }
    const last = context.history.at(-1);
    if (resumed && stepsDone > 0 && last?.role === 'assistant' && !last.toolCalls?.length) {
      return { message: last, steps: stepsDone, usage, stopReason: 'no_tool_calls' };
    }
    if (resumed && stepsDone >= maxSteps) {
      const lastAssistant = [...context.history].reverse().find((m) => m.role === 'assistant')!;
      return { message: lastAssistant, steps: stepsDone, usage, stopReason: 'max_steps' };
    }
    const agent = this.options.kernel.agent({
      ...(data.tenant === null ? {} : { tenant: data.tenant }),
      ...(data.options.provider === undefined ? {} : { provider: data.options.provider }),
      systemPrompt: data.options.systemPrompt ?? this.options.systemPrompt ?? '',
      maxSteps: maxSteps - stepsDone,
      context,
    });
    const turnKey = keys.turn(data.turnId);
    const runOptions: AgentRunOptions = {
      signal,
      // Where the call ledger's keys go on: the step that a lost worker left open is completed from
      // the ledger (the run's step 1), and each call keeps its idempotency key.
      turn: turnIdentity,
      onEvent: (event) => {
        if (event.type === 'step_end') {
          usage = event.usage ? addUsage(usage, event.usage) : usage;
          stepUsage = undefined;
        }
        publisher.publish(fromAgentEvent(event, stepsDone));
      },
      hooks: [
        {
          name: 'kosong.bullmq',
          hooks: {
            onStepStart: async (event) => {
              // Recorded before the provider is called, so a recovery can cancel this step's tool jobs.
              try {
                const cancel = await this.#commands.eval(STEP_START_SCRIPT, 3, keys.meta, keys.owner, turnKey, lease.token, `${data.turnId}\t${event.stepId}`);
                if (typeof cancel === 'string') interrupt({ kind: 'cancel', reason: cancel });
              } catch (error) {
                interrupt({ kind: 'lost', error: error instanceof Error && error.message.includes('FENCED') ? new FencedError(data.tenant ?? undefined, data.session, lease.token) : (error as Error) });
              }
            },
            onStepEnd: (event) => {
              // (A resumed step makes no request: its usage is the pending step's, set below.)
              if (!event.error) stepUsage = event.usage ?? stepUsage;
            },
          },
        },
      ],
    };
    let result: AgentTurnResult;
    if (resuming) {
      stepUsage = pending.usage;
      // A first attempt passes the decisions as they were sent (one naming no waiting call fails the
      // turn, as `Agent.resume` does); a recovered one drops those its lost worker already applied.
      const decisions = attempt === 1 ? data.resume!.decisions : waitingOnly(data.resume!.decisions, pending);
      result = await agent.resume({ ...runOptions, decisions });
    } else {
      result = await agent.run(resumed ? [] : (data.input as Message[]), runOptions);
    }
    await publisher.flush();
    if (result.stopReason === 'approval_required' && context.pendingStep) return approvalRequired(context.pendingStep, stepsDone + result.steps, usage);
    return { message: result.message, steps: stepsDone + result.steps, usage, stopReason: result.stopReason };
  }

  /**
   * With an approval secret: refuses (an `ApprovalSignatureError`, before anything runs) decisions
   * that are not signed with the tenant's secret for this resumption and the step that waits.
   */
  #checkSignature(data: TurnJobData, pending: PendingStep): void {
    const { approvalSecret } = this.options;
    const decisions = data.resume!.decisions;
    if (approvalSecret === undefined || Object.keys(decisions).length === 0) return;
    const tenant = data.tenant ?? undefined;
    verifyDecisions(secretFor(approvalSecret, tenant, 'AgentWorker'), data.resume!.signed, {
      tenant,
      session: data.session,
      turnId: data.turnId,
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
  async #replyToCancelledInput(data: TurnJobData, lease: SessionLease): Promise<void> {
    const context = new RedisContext({ connection: this.#commands, tenant: data.tenant ?? undefined, session: data.session, prefix: this.#prefix, fence: lease.token });
    try {
      await context.restore();
      if (context.pendingStep !== undefined || context.ledger.openStep !== undefined || context.history.at(-1)?.role !== 'user') return;
      await context.append({ role: 'assistant', content: [{ type: 'text', text: CANCELLED_REPLY }] });
    } catch {
      // the session is as the turn left it: whole steps only
    }
  }

  /** Cancels the tool jobs of the step the turn's lost worker was running, and waits for them to stop. */
  async #cancelOrphans(keys: SessionKeys, turnId: string): Promise<void> {
    const running = await this.#commands.hget(keys.meta, 'turnStepId');
    const [turn, stepId] = (running ?? '').split('\t');
    if (turn !== turnId || !stepId) return; // the lost worker had not started a step of this turn
    const members = await this.#commands.smembers(this.#keys.stepJobs(stepId));
    await Promise.all(
      members.map(async (member) => {
        const [queueName, jobId] = member.split('\t') as [string, string];
        await cancelToolJobAndWait(this.#toolQueue(queueName), this.#commands, this.#keys, jobId, 'the turn is being recovered on another worker', this.options.orphanDeadlineMs ?? 10_000);
      }),
    );
  }

  #toolQueue(name: string): Queue {
    let queue = this.#toolQueues.get(name);
    if (!queue) {
      queue = new Queue(name, { connection: this.#commands, prefix: this.#prefix });
      queue.on('error', () => undefined);
      this.#toolQueues.set(name, queue);
    }
    return queue;
  }

  /** Whether this turn is the session's earliest pending one; finished or vanished turns ahead of it are cleared. */
  async #isFirstInLine(keys: SessionKeys, turnId: string): Promise<boolean> {
    for (;;) {
      const [head] = await this.#commands.zrange(keys.pending, 0, 0);
      if (head === undefined || head === turnId) return true;
      const headState = await this.#commands.hget(keys.turn(head), 'state');
      const job = await Job.fromId(this.#turnQueue, head).catch(() => undefined);
      const finished = headState === null || (headState !== 'queued' && headState !== 'running') || (job?.finishedOn !== undefined && job?.failedReason !== undefined);
      if (!finished) return false;
      await this.#commands.zrem(keys.pending, head);
    }
  }

  /** Puts the job aside for a while (it waits for an earlier turn of its session). */
  async #putAside(job: Job, token: string | undefined): Promise<never> {
    await job.moveToDelayed(Date.now() + (this.options.waitTurnMs ?? 250), token);
    throw new DelayedError();
  }

  /** Wakes the session's next pending turn, if it was put aside. */
  async #promoteNext(keys: SessionKeys): Promise<void> {
    try {
      const [next] = await this.#commands.zrange(keys.pending, 0, 0);
      if (next === undefined) return;
      const job = await Job.fromId(this.#turnQueue, next);
      if (job && (await job.isDelayed())) await job.promote();
    } catch {
      // it wakes up on its own after waitTurnMs
    }
  }

  /** Publishes the terminal event and marks the turn finished. */
  async #finish(keys: SessionKeys, turnId: string, publisher: EventPublisher | undefined, event: TurnEvent): Promise<void> {
    if (publisher) {
      publisher.publish(event);
      await publisher.flush();
    } else {
      await this.#commands.xadd(keys.events(turnId), '*', 'e', JSON.stringify(event));
    }
    const state = event.type === 'turn_end' ? 'done' : event.type === 'turn_failed' ? 'failed' : 'cancelled';
    await this.#commands.eval(FINISH_SCRIPT, 3, keys.turn(turnId), keys.pending, keys.events(turnId), turnId, state, JSON.stringify(event.type === 'turn_end' ? event.result : event), TURN_TTL_SECONDS);
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
        await Promise.all([...this.#toolQueues.values(), this.#turnQueue].map((q) => closeOrDisconnect(q)));
        await Promise.all([closeRedis(this.#subscriber), closeRedis(this.#commands), closeRedis(this.#redis)]);
      }
    })();
    return this.#closing;
  }
}

/** The result of a turn that ends waiting for approval: the step's usage counted, the waiting calls named. */
function approvalRequired(pending: PendingStep, steps: number, usage: TokenUsage): QueuedTurnResult {
  return {
    message: pending.message,
    steps,
    usage: pending.usage ? addUsage(usage, pending.usage) : usage,
    stopReason: 'approval_required',
    pendingApprovals: pendingApprovals(pending),
  };
}

/** The decisions about calls that still wait (a recovered resumption may have decided some already). */
function waitingOnly(decisions: Readonly<Record<string, ApprovalDecision>>, pending: PendingStep): Record<string, ApprovalDecision> {
  const waiting = new Set(pendingApprovals(pending).map((p) => p.toolCall.id));
  return Object.fromEntries(Object.entries(decisions).filter(([id]) => waiting.has(id)));
}

/**
 * Publishes a turn's events in order without waiting for each (one connection keeps them in
 * order), each fenced by the session lease. The first failure (fenced, Redis gone) is reported once.
 */
class EventPublisher {
  #last: Promise<unknown> = Promise.resolve();
  #failed = false;

  constructor(
    private readonly redis: Redis,
    private readonly stream: string,
    private readonly owner: string,
    private readonly fence: number,
    private readonly onFailure: (error: Error) => void,
  ) {}

  publish(event: TurnEvent): void {
    const publish = (this.redis as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>)[PUBLISH_COMMAND]!;
    const sent = publish.call(this.redis, this.stream, this.owner, this.fence, MAX_EVENTS_PER_TURN, JSON.stringify(event));
    this.#last = sent.catch((error: unknown) => {
      if (this.#failed) return;
      this.#failed = true;
      this.onFailure(error instanceof Error ? error : new Error(String(error)));
    });
  }

  /** Resolves once everything published so far was written (or failed). */
  async flush(): Promise<void> {
    await this.#last;
  }
}
