import { Job, type Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { GlobalKeys } from './keys.js';

/** How a cancellation went. */
export type ToolJobCancellation = 'removed' | 'signalled';

/** What goes on a queue's cancellation channel. @internal */
export interface ToolCancelMessage {
  readonly jobId: string;
  readonly reason: string;
  /**
   * The run of the call it cancels (`ToolJobData.run`): a call run again with the same job id (its
   * step done again) is another run, which a cancellation of the earlier one must not reach.
   */
  readonly run?: string;
}

/**
 * Cancels one run of a tool job wherever it is: a job not running (waiting, delayed, or whose worker
 * was lost) is removed from the queue; a running one is told to abort, on whichever worker runs it,
 * through the queue's cancellation channel (the worker aborts the tool's signal with BullMQ's
 * `cancelJob`). `run`: the run to cancel (default: the job's, read from Redis).
 * @internal
 */
export async function cancelToolJob(queue: Queue, redis: Redis, keys: GlobalKeys, jobId: string, reason: string, run?: string): Promise<ToolJobCancellation> {
  const removed = await queue.remove(jobId);
  if (removed === 1) return 'removed';
  await signalToolJob(queue, redis, keys, jobId, reason, run);
  return 'signalled';
}

/**
 * Publishes the cancellation of a running job (again: a worker that had not started that run yet
 * remembers it). `run`: the run to cancel (default: the job's, read from Redis).
 * @internal
 */
export async function signalToolJob(queue: Queue, redis: Redis, keys: GlobalKeys, jobId: string, reason: string, run?: string): Promise<void> {
  const runId = run ?? (await runOf(queue, jobId));
  const message: ToolCancelMessage = { jobId, reason, ...(runId === undefined ? {} : { run: runId }) };
  await redis.publish(keys.toolCancelChannel(queue.name), JSON.stringify(message));
}

/** The run of a job's data, if the job is there. */
async function runOf(queue: Queue, jobId: string): Promise<string | undefined> {
  const job = await Job.fromId(queue, jobId).catch(() => undefined);
  const run = (job?.data as { run?: unknown } | undefined)?.run;
  return typeof run === 'string' ? run : undefined;
}

/**
 * Cancels a tool job and waits until it is no longer running (finished, removed, or given up on at
 * the deadline), repeating the cancellation meanwhile. Returns whether it stopped in time.
 * @internal
 */
export async function cancelToolJobAndWait(
  queue: Queue,
  redis: Redis,
  keys: GlobalKeys,
  jobId: string,
  reason: string,
  deadlineMs: number,
): Promise<boolean> {
  const until = Date.now() + deadlineMs;
  // The run there now: the one to stop (not a later run of the same call, if one comes meanwhile).
  const run = await runOf(queue, jobId);
  if ((await cancelToolJob(queue, redis, keys, jobId, reason, run)) === 'removed') return true;
  let lastSignal = Date.now();
  for (;;) {
    const job = await Job.fromId(queue, jobId);
    const state = job ? await job.getState() : 'unknown';
    if (state !== 'active') return true;
    if (Date.now() >= until) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
    if (Date.now() - lastSignal > 1_000) {
      lastSignal = Date.now();
      if ((await cancelToolJob(queue, redis, keys, jobId, reason, run)) === 'removed') return true;
    }
  }
}
