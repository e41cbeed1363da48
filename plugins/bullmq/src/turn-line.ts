/** One turn per session at a time, in submission order: the line of a session's pending turns. @internal @module */
import { Job, type Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { SessionKeys } from './keys.js';
import { isActive } from './turn-job.js';

/**
 * The line of each session's pending turns (its `pending` set, in submission order), as agent
 * workers see it: a turn runs when it is first in line; a turn that ends wakes the next one.
 */
export class TurnLine {
  /** @param queue the turn queue (on `redis`'s prefix). */
  constructor(
    private readonly redis: Redis,
    private readonly queue: Queue,
  ) {}

  /** Whether this turn is the session's earliest pending one; ended or vanished turns ahead of it are cleared from the line. */
  async isFirst(keys: SessionKeys, turnId: string): Promise<boolean> {
    for (;;) {
      const [head] = await this.redis.zrange(keys.pending, 0, 0);
      if (head === undefined || head === turnId) return true;
      const headState = await this.redis.hget(keys.turn(head), 'state');
      const job = await Job.fromId(this.queue, head).catch(() => undefined);
      const ended = !isActive(headState) || (job?.finishedOn !== undefined && job?.failedReason !== undefined);
      if (!ended) return false;
      await this.redis.zrem(keys.pending, head);
    }
  }

  /** Wakes the session's next pending turn, if it was put aside. Never throws (it wakes up on its own after a while). */
  async wakeNext(keys: SessionKeys): Promise<void> {
    try {
      const [next] = await this.redis.zrange(keys.pending, 0, 0);
      if (next === undefined) return;
      const job = await Job.fromId(this.queue, next);
      if (job && (await job.isDelayed())) await job.promote();
    } catch {
      // it wakes up on its own after waitTurnMs
    }
  }
}
