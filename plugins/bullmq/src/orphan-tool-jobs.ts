/** The tool jobs a lost worker's step left behind. @internal @module */
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { closeOrDisconnect } from './connection.js';
import type { GlobalKeys, SessionKeys } from './keys.js';
import { cancelToolJobAndWait } from './tool-job-canceller.js';

/**
 * Cancels the tool jobs of the step a turn's lost worker was running (the session's `turnStepId`,
 * recorded at each step start; the step's jobs, recorded by `RemoteToolset`), before the turn goes
 * on elsewhere: no orphan keeps running beside the recovered turn.
 */
export class OrphanToolJobs {
  readonly #queues = new Map<string, Queue>();

  /** @param deadlineMs how long the jobs of a step get to stop. */
  constructor(
    private readonly redis: Redis,
    private readonly keys: GlobalKeys,
    private readonly deadlineMs: number,
  ) {}

  /** Cancels the tool jobs of the step the turn's lost worker was running (if it was running one), and waits for them to stop. */
  async cancel(session: SessionKeys, turnId: string): Promise<void> {
    const running = await this.redis.hget(session.meta, 'turnStepId');
    const [turn, stepId] = (running ?? '').split('\t');
    if (turn !== turnId || !stepId) return; // the lost worker had not started a step of this turn
    const members = await this.redis.smembers(this.keys.stepJobs(stepId));
    await Promise.all(
      members.map(async (member) => {
        const [queueName, jobId] = member.split('\t') as [string, string];
        await cancelToolJobAndWait(this.#queue(queueName), this.redis, this.keys, jobId, 'the turn is being recovered on another worker', this.deadlineMs);
      }),
    );
  }

  /** Closes the tool queues it opened. */
  async close(): Promise<void> {
    await Promise.all([...this.#queues.values()].map((q) => closeOrDisconnect(q)));
  }

  #queue(name: string): Queue {
    let queue = this.#queues.get(name);
    if (!queue) {
      queue = new Queue(name, { connection: this.redis, prefix: this.keys.prefix });
      queue.on('error', () => undefined);
      this.#queues.set(name, queue);
    }
    return queue;
  }
}
