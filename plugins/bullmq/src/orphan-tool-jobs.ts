/** The tool jobs a lost worker's step left behind. @internal @module */
import type { AgentContext, ToolResult } from '@kosong/core';
import { isToolResult } from '@kosong/core/toolset-kit';
import { Job, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { closeOrDisconnect } from './connection.js';
import type { GlobalKeys, SessionKeys } from './keys.js';
import { cancelToolJobAndWait } from './tool-job-canceller.js';
import { isToolJobData, type ToolJobOutcome } from './tool-job.js';

/** The results of a lost step's tool jobs that finished with one, by the call's idempotency key. */
export type OrphanOutcomes = ReadonlyMap<string, ToolResult>;

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

  /**
   * Cancels the tool jobs of the step the turn's lost worker was running (if it was running one),
   * and waits for them to stop. Returns the results of those that finished with one (before the
   * worker's death, after it, or as they were being cancelled), by idempotency key: the tool ran
   * to its end, so its result is the call's (see {@link adoptOrphanOutcomes}). A job that was
   * cancelled, lost or failed gives none.
   */
  async cancel(session: SessionKeys, turnId: string): Promise<OrphanOutcomes> {
    const outcomes = new Map<string, ToolResult>();
    const running = await this.redis.hget(session.meta, 'turnStepId');
    const [turn, stepId] = (running ?? '').split('\t');
    if (turn !== turnId || !stepId) return outcomes; // the lost worker had not started a step of this turn
    const members = await this.redis.smembers(this.keys.stepJobs(stepId));
    await Promise.all(
      members.map(async (member) => {
        const [queueName, jobId] = member.split('\t') as [string, string];
        const queue = this.#queue(queueName);
        // A finished job is looked at before the cancellation, which removes what is not running.
        if (!this.#harvest(await Job.fromId(queue, jobId).catch(() => undefined), outcomes)) {
          await cancelToolJobAndWait(queue, this.redis, this.keys, jobId, 'the turn is being recovered on another worker', this.deadlineMs);
          this.#harvest(await Job.fromId(queue, jobId).catch(() => undefined), outcomes);
        }
      }),
    );
    return outcomes;
  }

  /** Keeps a finished job's result, if it finished with one; `true` when the job is finished. */
  #harvest(job: Job | undefined, outcomes: Map<string, ToolResult>): boolean {
    if (job?.finishedOn === undefined) return false;
    const data: unknown = job.data;
    const outcome = job.returnvalue as ToolJobOutcome | null | undefined;
    if (job.failedReason || !isToolJobData(data) || data.idempotencyKey === undefined || !isToolResult(outcome) || outcome.interrupted === true) return true;
    outcomes.set(data.idempotencyKey, { toolCallId: data.toolCall.id, returnValue: outcome.returnValue });
    return true;
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

/**
 * Records, in the context's call ledger, the outcome of each call of its open step that started
 * and has none, when a lost worker's tool job for that call finished with a result: the step done
 * again then reuses the result (the tool is not asked again, and the model gets what the tool
 * answered rather than "interrupted"). Matched by idempotency key (`${step key}/${index}`) and
 * the call's id. Returns how many were adopted.
 * @internal
 */
export async function adoptOrphanOutcomes(context: AgentContext, outcomes: OrphanOutcomes): Promise<number> {
  const ledger = context.ledger;
  const open = ledger?.openStep;
  if (ledger === undefined || open === undefined || outcomes.size === 0) return 0;
  let adopted = 0;
  for (const [index, call] of open.calls.entries()) {
    const result = outcomes.get(`${open.key}/${index}`);
    if (!call.started || call.result !== undefined || result === undefined || result.toolCallId !== open.message.toolCalls?.[index]?.id) continue;
    await ledger.recordOutcome({ type: 'outcome', key: open.key, index, result });
    adopted++;
  }
  return adopted;
}
