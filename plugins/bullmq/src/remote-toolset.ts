import { randomUUID } from 'node:crypto';
import type {
  ReplayPolicy,
  Tool,
  ToolCall,
  ToolContext,
  ToolResult,
  Toolset,
} from '@kosong/core';
import { DEFAULT_REPLAY_POLICY, isReplayPolicy, isToolResult, toolCancelled, toolInvalidReturn } from '@kosong/core/toolset-kit';
import { Job, Queue, QueueEvents } from 'bullmq';
import type { Redis } from 'ioredis';
import { asUnavailable, closeOrDisconnect, closeRedis, createRedis, type RedisConnection } from './connection.js';
import { DEFAULT_PREFIX, GlobalKeys, toolQueueName } from './keys.js';
import { checkKnownOptions, type KnownOptions } from './options.js';
import { cancelToolJob, signalToolJob } from './tool-job-canceller.js';
import { callJobId, remoteToolTimedOut, toolJobVanished, toolWorkerLost, type ToolJobData, type ToolJobOutcome } from './tool-job.js';
import type { PublishedToolList } from './tool-worker.js';

/** Options of {@link RemoteToolset.connect}. */
export interface RemoteToolsetOptions {
  /** Redis. */
  readonly connection: RedisConnection;
  /** The name the `ToolWorker`s serve the toolset under. */
  readonly name: string;
  /** The tenant the calls are made for: they go to that tenant's queue only. */
  readonly tenant?: string;
  /** The tools the model is told about; default: the list the workers published in Redis. */
  readonly tools?: readonly Tool[];
  /**
   * The replay policy of tools (see {@link RemoteToolset.replayPolicy}), over those the workers
   * published (with `tools`, nothing is read: these are all there is). Tools named nowhere: `'never'`.
   */
  readonly replay?: Readonly<Record<string, ReplayPolicy>>;
  /** How long one call may take, queueing included, before it is cancelled (default 5 min). */
  readonly timeoutMs?: number;
  /**
   * After a call is cancelled (abort, timeout), how long to wait for the remote tool to settle
   * before giving up on it (default 30 s). The step's own cleanup deadline is usually shorter: it
   * reports the call as leaked at its deadline, as it does for local tools.
   */
  readonly abandonAfterMs?: number;
  /** How often a cancellation is sent again while the remote tool has not settled (default 1 s). */
  readonly resendCancelMs?: number;
  /** Prefix of every Redis key (default `kosong`). */
  readonly prefix?: string;
  /** How long commands wait for Redis to come back, or a frozen one to answer, before the call fails (default 15 s). */
  readonly reconnectWindowMs?: number;
}

const REMOTE_TOOLSET_OPTIONS: KnownOptions<RemoteToolsetOptions> = {
  connection: true,
  name: true,
  tenant: true,
  tools: true,
  replay: true,
  timeoutMs: true,
  abandonAfterMs: true,
  resendCancelMs: true,
  prefix: true,
  reconnectWindowMs: true,
};

/** A call waiting for its job's outcome. */
interface PendingCall {
  readonly call: ToolCall;
  readonly data: ToolJobData;
  /** Its job was there before this call enqueued it (a step done again: the same idempotency key). */
  duplicate: boolean;
  /** It enqueued the job again once already (the job it found had no result to reuse). */
  replaced: boolean;
  /** It has its result: nothing enqueues its job again. */
  settled: boolean;
  settle(result: ToolResult): void;
}

/** The text BullMQ gives a job failed for stalling too often (its worker kept dying). */
const STALLED_TOO_OFTEN = 'job stalled more than allowable limit';
/** Job results are kept this long (seconds), so an enqueue repeated meanwhile finds the same job. */
const KEEP_FINISHED_SECONDS = 3_600;

/**
 * A toolset whose calls run as BullMQ jobs on `ToolWorker` processes, on any machine.
 *
 * Each call is one job whose id is derived from the call's idempotency key (its stable identity
 * under an agent; without one, the step id and the call's index): enqueueing it twice makes one
 * job, and a call of a step done again finds the job of its first run — it reuses the result, or
 * runs again when that job was cancelled, lost or failed. Results come back through the queue's
 * events and are returned, like any toolset's, to `step()`, which keeps them in call order. When
 * the step aborts (or the call times out), a job still waiting is removed and a running one is
 * cancelled on whichever worker runs it; the call settles when the remote tool has settled. A call
 * whose worker died gets the error result "the tool worker was lost" (unless its tool is marked
 * safe to rerun on the worker).
 *
 * Replay policies come with the tool list the workers publish ({@link RemoteToolset.replayPolicy}).
 */
export class RemoteToolset implements Toolset {
  readonly queueName: string;
  readonly #queue: Queue;
  readonly #events: QueueEvents;
  readonly #redis: Redis;
  readonly #eventsRedis: Redis;
  readonly #keys: GlobalKeys;
  readonly #pending = new Map<string, PendingCall>();
  #tools: readonly Tool[] = [];
  #replay: Readonly<Record<string, ReplayPolicy>> = {};
  #closed = false;

  private constructor(
    private readonly options: RemoteToolsetOptions,
    lastEventId: string,
    redis: Redis,
  ) {
    this.queueName = toolQueueName(options.tenant, options.name);
    this.#keys = new GlobalKeys(options.prefix ?? DEFAULT_PREFIX);
    this.#redis = redis;
    const prefix = options.prefix ?? DEFAULT_PREFIX;
    this.#queue = new Queue(this.queueName, { connection: redis, prefix });
    this.#eventsRedis = createRedis(options.connection, { blocking: true, name: `kosong-tool-events:${this.queueName}` });
    this.#events = new QueueEvents(this.queueName, {
      connection: this.#eventsRedis,
      prefix,
      lastEventId,
    });
    this.#queue.on('error', () => undefined);
    this.#events.on('error', () => undefined);
    this.#events.on('completed', ({ jobId, returnvalue }) => this.#completed(jobId, returnvalue));
    this.#events.on('failed', ({ jobId, failedReason }) => void this.#failedJob(jobId, failedReason));
    this.#events.on('duplicated', ({ jobId }) => void this.#duplicated(jobId));
  }

  /**
   * Connects to the queue of `name` for `tenant`. Without `tools`, reads the tool list a worker
   * published; fails if none has.
   *
   * @throws TypeError for an option it does not know (before anything connects).
   */
  static async connect(options: RemoteToolsetOptions): Promise<RemoteToolset> {
    checkKnownOptions('RemoteToolset', options, REMOTE_TOOLSET_OPTIONS);
    const redis = createRedis(options.connection, {
      blocking: false,
      name: 'kosong-remote-toolset',
      ...(options.reconnectWindowMs === undefined ? {} : { reconnectWindowMs: options.reconnectWindowMs }),
    });
    try {
      const keys = new GlobalKeys(options.prefix ?? DEFAULT_PREFIX);
      const queueName = toolQueueName(options.tenant, options.name);
      let tools = options.tools;
      let replay: Readonly<Record<string, ReplayPolicy>> = {};
      if (!tools) {
        const published = await redis.get(keys.toolList(queueName));
        if (published === null) {
          throw new Error(`No tool worker has published the tools of "${options.name}"${options.tenant === undefined ? '' : ` for tenant "${options.tenant}"`} (queue ${queueName}); start one, or pass \`tools\``);
        }
        const list = JSON.parse(published) as PublishedToolList;
        tools = list.tools;
        replay = list.replay ?? {};
      }
      replay = { ...replay, ...options.replay };
      for (const [name, policy] of Object.entries(replay)) {
        if (!isReplayPolicy(policy)) throw new TypeError(`RemoteToolset: the replay policy of "${name}" must be 'safe', 'never' or 'ask'`);
      }
      // Events are read from the current end of the queue's event stream: nothing of ours is missed.
      const last = (await redis.xrevrange(`${options.prefix ?? DEFAULT_PREFIX}:${queueName}:events`, '+', '-', 'COUNT', 1)) as [string, string[]][];
      const toolset = new RemoteToolset(options, last[0]?.[0] ?? '0-0', redis);
      toolset.#tools = tools;
      toolset.#replay = replay;
      await Promise.all([toolset.#queue.waitUntilReady(), toolset.#events.waitUntilReady()]);
      return toolset;
    } catch (error) {
      await closeRedis(redis);
      throw error;
    }
  }

  /** The tools the model is told about. */
  get tools(): readonly Tool[] {
    return this.#tools;
  }

  /**
   * The replay policy of a call's tool, as its workers published it (or `replay` said): what a step
   * done again may do with a call that started and has no recorded outcome. `'never'` for a tool
   * nobody declared.
   */
  replayPolicy(call: ToolCall): ReplayPolicy {
    const name = call.function.name;
    return Object.hasOwn(this.#replay, name) ? this.#replay[name]! : DEFAULT_REPLAY_POLICY;
  }

  /** Calls waiting for their remote outcome. */
  get inFlight(): number {
    return this.#pending.size;
  }

  /** Runs the call as a job and resolves with its result (or an error result; never rejects on a tool's failure). */
  async handle(call: ToolCall, context: ToolContext): Promise<ToolResult> {
    if (this.#closed) throw new Error(`RemoteToolset ${this.queueName} is closed`);
    const name = call.function.name;
    if (context.signal.aborted) return { toolCallId: call.id, returnValue: toolCancelled(name, context.signal.reason) };
    const jobId = callJobId(context) ?? `${randomUUID()}.0`;
    if (this.#pending.has(jobId)) throw new Error(`Call ${context.index} of step ${context.stepId} is already running`);

    let settle!: (result: ToolResult) => void;
    const outcome = new Promise<ToolResult>((resolve) => (settle = resolve));
    const data: ToolJobData = {
      tenant: this.options.tenant ?? null,
      stepId: context.stepId,
      index: context.index ?? 0,
      toolCall: call,
      ...(context.idempotencyKey === undefined ? {} : { idempotencyKey: context.idempotencyKey }),
      run: randomUUID(),
    };
    const pending: PendingCall = {
      call,
      data,
      duplicate: false,
      replaced: false,
      settled: false,
      settle: (result) => {
        pending.settled = true;
        settle(result);
      },
    };
    this.#pending.set(jobId, pending);
    try {
      const stepJobs = this.#keys.stepJobs(context.stepId);
      await this.#redis.multi().sadd(stepJobs, `${this.queueName}\t${jobId}`).expire(stepJobs, KEEP_FINISHED_SECONDS).exec();
      await this.#enqueue(jobId, data);
    } catch (error) {
      this.#pending.delete(jobId);
      throw asUnavailable(error, `Cannot run \`${name}\` on ${this.queueName}`);
    }
    return this.#await(jobId, call, outcome, context.signal);
  }

  #enqueue(jobId: string, data: ToolJobData): Promise<unknown> {
    return this.#queue.add(data.toolCall.function.name, data, {
      jobId,
      removeOnComplete: { age: KEEP_FINISHED_SECONDS },
      removeOnFail: { age: KEEP_FINISHED_SECONDS },
    });
  }

  /** Waits for the outcome; on abort or timeout cancels the job and waits for the remote tool to settle. */
  async #await(jobId: string, call: ToolCall, outcome: Promise<ToolResult>, signal: AbortSignal): Promise<ToolResult> {
    const name = call.function.name;
    const timeoutMs = this.options.timeoutMs ?? 300_000;
    let onAbort: (() => void) | undefined;
    let timer: NodeJS.Timeout | undefined;
    const interruption = new Promise<{ readonly reason: unknown; readonly timedOut: boolean }>((resolve) => {
      onAbort = () => resolve({ reason: signal.reason, timedOut: false });
      signal.addEventListener('abort', onAbort, { once: true });
      // The step may have aborted while the job was being enqueued: the listener came too late for that.
      if (signal.aborted) onAbort();
      timer = setTimeout(() => resolve({ reason: `timed out after ${timeoutMs} ms`, timedOut: true }), timeoutMs);
    });
    try {
      const first = await Promise.race([outcome, interruption]);
      if ('toolCallId' in first) return first;
      const fallback: ToolResult = {
        toolCallId: call.id,
        returnValue: first.timedOut ? remoteToolTimedOut(name, timeoutMs) : toolCancelled(name, first.reason),
      };
      const cancelled = await this.#cancel(jobId, first.reason);
      if (cancelled === 'removed') return fallback;
      const settled = await this.#settledOrAbandoned(jobId, outcome, first.reason);
      if (first.timedOut) return fallback;
      return settled ?? fallback;
    } finally {
      clearTimeout(timer);
      if (onAbort) signal.removeEventListener('abort', onAbort);
      this.#pending.delete(jobId);
    }
  }

  async #cancel(jobId: string, reason: unknown): Promise<'removed' | 'signalled' | 'failed'> {
    try {
      return await cancelToolJob(this.#queue, this.#redis, this.#keys, jobId, describeReason(reason), this.#pending.get(jobId)?.data.run);
    } catch {
      return 'failed'; // Redis unreachable: the remote tool's lock lapses, and its worker's result is dropped
    }
  }

  /** The remote result once the tool settled, or `undefined` when it did not within `abandonAfterMs`. */
  async #settledOrAbandoned(jobId: string, outcome: Promise<ToolResult>, reason: unknown): Promise<ToolResult | undefined> {
    const abandonAt = Date.now() + (this.options.abandonAfterMs ?? 30_000);
    const resendMs = this.options.resendCancelMs ?? 1_000;
    for (;;) {
      const wait = Math.min(resendMs, abandonAt - Date.now());
      if (wait <= 0) return undefined;
      let timer: NodeJS.Timeout | undefined;
      const result = await Promise.race([outcome, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), wait)))]);
      clearTimeout(timer);
      if (result) return result;
      try {
        await signalToolJob(this.#queue, this.#redis, this.#keys, jobId, describeReason(reason), this.#pending.get(jobId)?.data.run);
      } catch {
        // Redis away: try again at the next round
      }
    }
  }

  #completed(jobId: string, returnvalue: unknown): void {
    const pending = this.#pending.get(jobId);
    if (!pending) return;
    const { call } = pending;
    const outcome = returnvalue as ToolJobOutcome | null;
    const interrupted = outcome?.interrupted === true;
    // The outcome of an earlier job of this id (the call's run before its step was done again): its
    // result is the call's, but an interrupted one is not (the job is enqueued again, see #duplicated).
    if (interrupted && pending.duplicate && !pending.replaced) return void this.#replace(jobId, pending);
    if (interrupted && outcome.run !== undefined && outcome.run !== pending.data.run) return;
    pending.settle(
      isToolResult(returnvalue)
        ? { toolCallId: call.id, returnValue: returnvalue.returnValue }
        : { toolCallId: call.id, returnValue: toolInvalidReturn(`the tool worker sent ${returnvalue === null ? 'null' : typeof returnvalue}`) },
    );
  }

  /** A failed job: an earlier job of this id is not this call's (its failure is handled by #duplicated). */
  async #failedJob(jobId: string, failedReason: string): Promise<void> {
    const pending = this.#pending.get(jobId);
    if (!pending) return;
    try {
      const job = await Job.fromId(this.#queue, jobId);
      const run = (job?.data as ToolJobData | undefined)?.run;
      if (run !== undefined && run !== pending.data.run) {
        if (pending.duplicate && !pending.replaced) await this.#replace(jobId, pending);
        return;
      }
    } catch {
      // take it as this call's
    }
    this.#failed(jobId, failedReason);
  }

  #failed(jobId: string, failedReason: string): void {
    const pending = this.#pending.get(jobId);
    if (!pending) return;
    if (pending.duplicate && !pending.replaced) return void this.#replace(jobId, pending);
    const { call } = pending;
    const name = call.function.name;
    pending.settle({
      toolCallId: call.id,
      returnValue: failedReason === STALLED_TOO_OFTEN ? toolWorkerLost(name) : toolInvalidReturn(`the tool job failed: ${failedReason}`),
    });
  }

  /**
   * The job existed already: enqueued before under the same id, by a step done again (the same
   * idempotency key) or a resent command. Its result is reused once it has one; a job that was
   * cancelled, lost or failed is enqueued again (once), since the step asks for the call to run.
   */
  async #duplicated(jobId: string): Promise<void> {
    const pending = this.#pending.get(jobId);
    if (!pending) return;
    try {
      const job = await Job.fromId(this.#queue, jobId);
      if (!job) {
        // Removed meanwhile (by the recovery of a turn another worker took over): whose it was, and
        // whether it ran, is unknown. A call safe to rerun is enqueued again; any other is not.
        if (this.replayPolicy(pending.call) !== 'safe') return pending.settle({ toolCallId: pending.call.id, returnValue: toolJobVanished(pending.call.function.name) });
        pending.duplicate = true;
        return await this.#replace(jobId, pending);
      }
      // This very call's job (its add was resent after a reconnection, the first one had been applied):
      // not an earlier run, so never enqueued again, whatever its outcome — its outcome is the call's.
      if ((job.data as ToolJobData | undefined)?.run === pending.data.run) {
        if (job.finishedOn === undefined) return; // it runs (or waits): its outcome comes as an event
        if (job.failedReason) this.#failed(jobId, job.failedReason);
        else this.#completed(jobId, job.returnvalue);
        return;
      }
      pending.duplicate = true;
      if (job.finishedOn === undefined) return; // it runs (or waits): its outcome comes as an event
      if (job.failedReason || (job.returnvalue as ToolJobOutcome | null)?.interrupted === true) return await this.#replace(jobId, pending);
      this.#completed(jobId, job.returnvalue);
    } catch {
      // the call's timeout still bounds it
    }
  }

  /**
   * Enqueues the call again in place of the finished job it found, at most once per call: after
   * that (or if the job cannot be removed: it runs), the job's outcome is the call's.
   */
  async #replace(jobId: string, pending: PendingCall): Promise<void> {
    // Settled meanwhile (its outcome came while the job was looked up): its job runs no more.
    if (pending.replaced || pending.settled) return;
    pending.replaced = true;
    try {
      await this.#queue.remove(jobId);
      await this.#enqueue(jobId, pending.data);
    } catch {
      // the call's timeout still bounds it
    }
  }

  /** Closes the connections. Calls still waiting settle with a cancelled result. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const pending of this.#pending.values()) {
      pending.settle({ toolCallId: pending.call.id, returnValue: toolCancelled(pending.call.function.name, 'the remote toolset was closed') });
    }
    await Promise.all([closeOrDisconnect(this.#events), closeOrDisconnect(this.#queue)]);
    await Promise.all([closeRedis(this.#redis), closeRedis(this.#eventsRedis)]);
  }
}

function describeReason(reason: unknown): string {
  if (typeof reason === 'string') return reason;
  if (reason instanceof Error) return reason.message;
  return String(reason);
}
