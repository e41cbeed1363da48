import type { ReplayPolicy, Tool, Toolset } from '@kosong/core';
import { isReplayPolicy, replayPolicyOf, toolCancelled, toolNotExecuted } from '@kosong/core/toolset-kit';
import { Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { closeOrDisconnect, closeRedis, createRedis, type RedisConnection } from './connection.js';
import { DEFAULT_PREFIX, GlobalKeys, toolQueueName } from './keys.js';
import { checkKnownOptions, type KnownOptions } from './options.js';
import { isToolJobData, runLocally, toolAbandonedAtShutdown, toolWorkerLost, type ToolJobOutcome } from './tool-job.js';

/** Options of {@link ToolWorker.start}. */
export interface ToolWorkerOptions {
  /** Redis. */
  readonly connection: RedisConnection;
  /** The local toolset to serve (a `SimpleToolset`, an `McpToolset`, any `Toolset`). */
  readonly toolset: Toolset;
  /** The name `RemoteToolset`s use to reach this toolset. */
  readonly name: string;
  /** The tenant whose calls this worker runs (its queue is that tenant's only); none: calls made for no tenant. */
  readonly tenant?: string;
  /** Calls run at once, at most (default 8). */
  readonly concurrency?: number;
  /**
   * How long a call's lock lasts without renewal (default 30 s; renewed every half of it). A worker
   * that stops renewing (killed, frozen) is declared lost after this plus up to `stalledIntervalMs`.
   */
  readonly lockDurationMs?: number;
  /** How often this worker looks for calls whose worker was lost (default: `lockDurationMs`). */
  readonly stalledIntervalMs?: number;
  /**
   * Tools that may safely run again when the worker running them was lost (idempotent tools). Every
   * other tool's call gets the error result "the tool worker was lost" instead of a second run.
   */
  readonly retryOnWorkerLoss?: readonly string[];
  /**
   * The replay policy of each tool (see core's `ReplayPolicy`), published with the tool list for
   * `RemoteToolset.replayPolicy`: what a step done again (after a crash, a takeover) may do with a
   * call of the tool that started and has no recorded outcome. A tool not named here gets the served
   * toolset's `replayPolicy` for a call of it without arguments, else `'never'`. Tools whose policy
   * is `'safe'` also run again when their worker was lost, as if listed in `retryOnWorkerLoss`.
   */
  readonly replay?: Readonly<Record<string, ReplayPolicy>>;
  /** How many times a call of a tool in `retryOnWorkerLoss` may be run again (default 2). */
  readonly maxRetriesOnWorkerLoss?: number;
  /** Prefix of every Redis key (default `kosong`). */
  readonly prefix?: string;
}

const TOOL_WORKER_OPTIONS: KnownOptions<ToolWorkerOptions> = {
  connection: true,
  toolset: true,
  name: true,
  tenant: true,
  concurrency: true,
  lockDurationMs: true,
  stalledIntervalMs: true,
  retryOnWorkerLoss: true,
  replay: true,
  maxRetriesOnWorkerLoss: true,
  prefix: true,
};

/** Options of {@link ToolWorker.close}. */
export interface ToolWorkerCloseOptions {
  /** How long running calls may take to finish before they are aborted (default 10 s). */
  readonly deadlineMs?: number;
  /**
   * After the abort, how long running calls get to settle before the worker stops waiting for them
   * (default 5 s): their callers get the error result "abandoned at shutdown", and the tool, which
   * ignored its abort, is left running in this process.
   */
  readonly abandonAfterMs?: number;
}

/** What a tool worker publishes about its queue, for `RemoteToolset.connect`. @internal */
export interface PublishedToolList {
  readonly tools: readonly Tool[];
  readonly retryOnWorkerLoss: readonly string[];
  /** The replay policy of each tool (absent in lists of older versions: every tool is then `'never'`). */
  readonly replay?: Readonly<Record<string, ReplayPolicy>>;
}

/**
 * The replay policy of each tool of a toolset: `declared` first, else the toolset's own for a call of
 * the tool without arguments, else `'never'`.
 * @throws TypeError for a declared value that is no policy.
 */
export function replayPolicies(toolset: Toolset, declared: Readonly<Record<string, ReplayPolicy>> = {}): Record<string, ReplayPolicy> {
  for (const [name, policy] of Object.entries(declared)) {
    if (!isReplayPolicy(policy)) throw new TypeError(`ToolWorker: the replay policy of "${name}" must be 'safe', 'never' or 'ask'`);
  }
  return Object.fromEntries(
    toolset.tools.map((tool) => [
      tool.name,
      Object.hasOwn(declared, tool.name) ? declared[tool.name]! : replayPolicyOf(toolset, { type: 'function', id: '', function: { name: tool.name, arguments: '{}' } }),
    ]),
  );
}

/** How long a cancellation that arrived before its call started is remembered. */
const EARLY_CANCEL_TTL_MS = 60_000;
/** How long closing waits for BullMQ (and Redis) once no call is running any more. */
const CLOSE_GRACE_MS = 3_000;
/** The abort reason of calls still running at the close deadline. */
const SHUTTING_DOWN = 'the tool worker is shutting down';

/** A call this worker is running. */
interface RunningCall {
  readonly controller: AbortController;
  /** Stops waiting for the call: its job ends with the "abandoned" result. */
  abandon(): void;
}

/**
 * Serves a local toolset to `RemoteToolset`s over a BullMQ queue of one tenant: each call is one job,
 * run with an abort signal that fires when the caller aborts the step (on whichever worker runs it).
 *
 * A call whose worker was lost (killed mid-call) is not run again unless its tool is listed in
 * `retryOnWorkerLoss` or its replay policy is `'safe'`: the caller gets the error result "the tool
 * worker was lost". The tools' replay policies are published with the tool list (`replay`), and each
 * call's `idempotencyKey` is handed on to the tool.
 */
export class ToolWorker {
  readonly queueName: string;
  /** Calls this worker ran, by tool name (for tests and metrics). */
  readonly ran = new Map<string, number>();
  readonly #worker: Worker;
  readonly #redis: Redis;
  readonly #subscriber: Redis;
  readonly #keys: GlobalKeys;
  readonly #retryable: ReadonlySet<string>;
  readonly #replay: Readonly<Record<string, ReplayPolicy>>;
  /** Cancellations of runs that were not running here when they came, by job id. */
  readonly #earlyCancels = new Map<string, { readonly reason: string; readonly at: number; readonly run: string | undefined }>();
  /** The run of each job running here, by job id. */
  readonly #runs = new Map<string, string | undefined>();
  readonly #calls = new Set<RunningCall>();
  /** Set at the close deadline: a call taken after it is not started. */
  #pastDeadline = false;
  #closing: Promise<void> | undefined;

  private constructor(private readonly options: ToolWorkerOptions) {
    this.queueName = toolQueueName(options.tenant, options.name);
    this.#keys = new GlobalKeys(options.prefix ?? DEFAULT_PREFIX);
    this.#replay = replayPolicies(options.toolset, options.replay);
    const safe = Object.keys(this.#replay).filter((name) => this.#replay[name] === 'safe');
    this.#retryable = new Set([...(options.retryOnWorkerLoss ?? []), ...safe]);
    this.#redis = createRedis(options.connection, { blocking: true, name: `kosong-tool-worker:${this.queueName}` });
    this.#subscriber = createRedis(options.connection, { blocking: true, name: `kosong-tool-cancel:${this.queueName}` });
    const lockDuration = options.lockDurationMs ?? 30_000;
    this.#worker = new Worker(this.queueName, (job, _token, signal) => this.#process(job, signal), {
      connection: this.#redis,
      prefix: options.prefix ?? DEFAULT_PREFIX,
      concurrency: options.concurrency ?? 8,
      lockDuration,
      stalledInterval: options.stalledIntervalMs ?? lockDuration,
      // a lost call comes back once so that a worker can answer it ("lost", or a rerun if allowed)
      maxStalledCount: this.#retryable.size > 0 ? 1 + (options.maxRetriesOnWorkerLoss ?? 2) : 1,
      autorun: false,
    });
    // Worker errors (a connection lost, a lock renewal failing) are retried by BullMQ; never crash on them.
    this.#worker.on('error', () => undefined);
  }

  /**
   * Starts a worker: publishes the tool list, listens for cancellations, then takes calls.
   * @throws TypeError for an option it does not know (before anything connects).
   */
  static async start(options: ToolWorkerOptions): Promise<ToolWorker> {
    checkKnownOptions('ToolWorker', options, TOOL_WORKER_OPTIONS);
    const worker = new ToolWorker(options);
    try {
      await worker.#begin();
    } catch (error) {
      await worker.close({ deadlineMs: 0 });
      throw error;
    }
    return worker;
  }

  /** Calls running now. */
  get running(): number {
    return this.#calls.size;
  }

  async #begin(): Promise<void> {
    const published: PublishedToolList = { tools: this.options.toolset.tools, retryOnWorkerLoss: [...this.#retryable], replay: this.#replay };
    await this.#redis.set(this.#keys.toolList(this.queueName), JSON.stringify(published));
    this.#subscriber.on('message', (_channel: string, message: string) => this.#onCancel(message));
    await this.#subscriber.subscribe(this.#keys.toolCancelChannel(this.queueName));
    void this.#worker.run().catch(() => undefined);
    await this.#worker.waitUntilReady();
  }

  #onCancel(message: string): void {
    let parsed: { jobId?: unknown; reason?: unknown; run?: unknown };
    try {
      parsed = JSON.parse(message) as typeof parsed;
    } catch {
      return;
    }
    if (typeof parsed.jobId !== 'string') return;
    const reason = typeof parsed.reason === 'string' ? parsed.reason : 'cancelled';
    const run = typeof parsed.run === 'string' ? parsed.run : undefined;
    // A cancellation is for one run: another run of the call (its step done again, same job id) goes on.
    const running = this.#runs.get(parsed.jobId);
    if ((run === undefined || running === undefined || running === run) && this.#worker.cancelJob(parsed.jobId, reason)) return;
    // That run is not running here (yet): remembered, in case this worker is about to start it (a
    // cancellation naming no run is for a job whose data names none).
    const now = Date.now();
    for (const [id, entry] of this.#earlyCancels) if (now - entry.at > EARLY_CANCEL_TTL_MS) this.#earlyCancels.delete(id);
    this.#earlyCancels.set(parsed.jobId, { reason, at: now, run });
  }

  async #process(job: Job, signal: AbortSignal | undefined): Promise<ToolJobOutcome> {
    const run = isToolJobData(job.data) ? job.data.run : undefined;
    if (job.id !== undefined) this.#runs.set(job.id, run);
    try {
      const outcome = await this.#run(job, signal);
      return run === undefined ? outcome : { ...outcome, run };
    } finally {
      if (job.id !== undefined) this.#runs.delete(job.id);
    }
  }

  async #run(job: Job, signal: AbortSignal | undefined): Promise<ToolJobOutcome> {
    const data: unknown = job.data;
    if (!isToolJobData(data)) {
      return { toolCallId: '', returnValue: toolNotExecuted('the tool job is malformed (not a kosong tool call)') };
    }
    const call = data.toolCall;
    if (data.tenant !== (this.options.tenant ?? null)) {
      // Queues are per tenant, so this never happens unless someone writes to the queue by hand.
      return { toolCallId: call.id, returnValue: toolNotExecuted('the call was made for another tenant than this worker serves') };
    }
    const name = call.function.name;
    if (job.stalledCounter > 0 && !this.#retryable.has(name)) return { toolCallId: call.id, returnValue: toolWorkerLost(name), interrupted: true };

    const controller = new AbortController();
    const early = job.id === undefined ? undefined : this.#earlyCancels.get(job.id);
    if (early && early.run === data.run) {
      this.#earlyCancels.delete(job.id!);
      controller.abort(new Error(early.reason));
    }
    const onAbort = (): void => controller.abort(new Error(typeof signal?.reason === 'string' ? signal.reason : 'cancelled'));
    if (signal?.aborted) onAbort();
    if (this.#pastDeadline) controller.abort(new Error(SHUTTING_DOWN));
    // Cancelled before it started (the caller aborted while the call was being enqueued or taken by
    // this worker): it is not started, since a tool given an aborted signal would wait for an abort
    // event that has already fired, and run to its end.
    if (controller.signal.aborted) return { toolCallId: call.id, returnValue: toolCancelled(name, controller.signal.reason), interrupted: true };
    signal?.addEventListener('abort', onAbort, { once: true });
    let abandon!: () => void;
    const abandoned = new Promise<ToolJobOutcome>((resolve) => (abandon = () => resolve({ toolCallId: call.id, returnValue: toolAbandonedAtShutdown(name), interrupted: true })));
    const running: RunningCall = { controller, abandon };
    this.#calls.add(running);
    this.ran.set(name, (this.ran.get(name) ?? 0) + 1);
    try {
      const context = { signal: controller.signal, toolCall: call, stepId: data.stepId, index: data.index, ...(data.idempotencyKey === undefined ? {} : { idempotencyKey: data.idempotencyKey }) };
      const outcome: ToolJobOutcome = await Promise.race([runLocally(this.options.toolset, call, context), abandoned]);
      // Aborted while it ran: whatever it returned, it may not have done all of its work.
      return controller.signal.aborted && outcome.interrupted !== true ? { ...outcome, interrupted: true } : outcome;
    } finally {
      this.#calls.delete(running);
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Stops taking calls and lets running ones finish; those still running at the deadline are
   * aborted (their callers get the tool's cancelled result), and those that ignore their abort are
   * abandoned `abandonAfterMs` later. Bounded even when Redis is away: the connections are then
   * dropped. Idempotent.
   */
  close(options: ToolWorkerCloseOptions = {}): Promise<void> {
    this.#closing ??= (async () => {
      const deadlineMs = options.deadlineMs ?? 10_000;
      const abandonAfterMs = options.abandonAfterMs ?? 5_000;
      const deadline = setTimeout(() => {
        this.#pastDeadline = true;
        for (const call of this.#calls) call.controller.abort(new Error(SHUTTING_DOWN));
      }, deadlineMs);
      const abandon = setTimeout(() => {
        for (const call of this.#calls) call.abandon();
      }, deadlineMs + abandonAfterMs);
      try {
        await closeOrDisconnect(this.#worker, deadlineMs + abandonAfterMs + CLOSE_GRACE_MS);
      } finally {
        clearTimeout(deadline);
        clearTimeout(abandon);
        await Promise.all([closeRedis(this.#subscriber), closeRedis(this.#redis)]);
      }
    })();
    return this.#closing;
  }
}
