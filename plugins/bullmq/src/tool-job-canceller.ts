import { Job, type Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { GlobalKeys } from './keys.js';

/** How a cancellation went. */
export type ToolJobCancellation = 'removed' | 'signalled';

/**
 * Cancels one tool job wherever it is: a job not running (waiting, delayed, or whose worker was lost)
 * is removed from the queue; a running one is told to abort, on whichever worker runs it, through
 * the queue's cancellation channel (the worker aborts the tool's signal with BullMQ's `cancelJob`).
 * @internal
 */
export async function cancelToolJob(queue: Queue, redis: Redis, keys: GlobalKeys, jobId: string, reason: string): Promise<ToolJobCancellation> {
  const removed = await queue.remove(jobId);
  if (removed === 1) return 'removed';
  await signalToolJob(queue, redis, keys, jobId, reason);
  return 'signalled';
}

/** Publishes the cancellation of a running job (again: a worker that had not started it yet remembers it). @internal */
export async function signalToolJob(queue: Queue, redis: Redis, keys: GlobalKeys, jobId: string, reason: string): Promise<void> {
  await redis.publish(keys.toolCancelChannel(queue.name), JSON.stringify({ jobId, reason }));
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
  if ((await cancelToolJob(queue, redis, keys, jobId, reason)) === 'removed') return true;
  let lastSignal = Date.now();
  for (;;) {
    const job = await Job.fromId(queue, jobId);
    const state = job ? await job.getState() : 'unknown';
    if (state !== 'active') return true;
    if (Date.now() >= until) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
    if (Date.now() - lastSignal > 1_000) {
      lastSignal = Date.now();
      if ((await cancelToolJob(queue, redis, keys, jobId, reason)) === 'removed') return true;
    }
  }
}
