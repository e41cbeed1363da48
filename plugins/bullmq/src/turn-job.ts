/**
 * The turn contract between `TurnQueue` and `AgentWorker`: what a turn's job carries, how long a
 * turn stays in Redis, the states of its hash, and its tenant — one form in the process
 * (`undefined`: no tenant), the wire forms kept here only.
 *
 * @module
 */
import type { ApprovalDecision, Message, RunnerOptions, StepOptions } from '@kosong/core';
import { checkTimeoutBudgets } from '@kosong/core/runtime';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { SignedDecisions } from './approval-signature.js';
import type { SessionKeys } from './keys.js';
import { checkKnownOptions, type KnownOptions } from './options.js';
import type { TerminalTurnEvent } from './turn-events.js';
import { FINISH_SCRIPT, SUBMIT_SCRIPT } from './turn-scripts.js';

/** How long a finished turn's events, state and job stay in Redis (seconds). */
export const TURN_TTL_SECONDS = 86_400;

/** The name of every turn's job in the turn queue. */
const TURN_JOB_NAME = 'turn';

/**
 * Options of one queued turn, applied by the worker (plain JSON: they travel in the turn's job).
 * `systemPrompt` is `step()`'s (see `StepOptions`), the system prompt of each step of the turn
 * (default: the worker's); `provider` is a kernel runner's (see `RunnerOptions`), whose default is
 * the tenant's provider, else the worker kernel's default. `timeouts` are `step()`'s too, with
 * `turnMs` as for `agent.run(input, { timeouts })`: `turnMs` bounds the turn's run on its worker
 * (each attempt, after a recovery too), and the turn's budgets are merged over the worker's agent's,
 * field by field. A budget that runs out fails the turn: `result()` rejects with a
 * `TurnFailedError` whose `errorName` is `'TimeoutBudgetError'` and whose `cause` is that
 * `TimeoutBudgetError` (its `budget`, `limitMs`); a tool call's budget gives the model an error
 * result, and the turn goes on.
 */
export interface TurnOptions extends Partial<Pick<StepOptions, 'systemPrompt' | 'timeouts'>>, Pick<RunnerOptions, 'provider'> {
  /**
   * Steps of the turn at most, counting those before a recovery (default: the worker's
   * `AgentWorkerOptions.maxSteps`); the agent's `maxSteps` for the steps left.
   */
  readonly maxSteps?: number;
}

const TURN_OPTIONS: KnownOptions<TurnOptions> = { systemPrompt: true, maxSteps: true, provider: true, timeouts: true };

/**
 * Checks a submitter's turn options.
 * @throws TypeError for an option it does not know, a `maxSteps` that is not a positive integer, or
 * bad `timeouts` (an unknown budget; one that is not a positive number of ms a timer can wait).
 */
export function checkTurnOptions(options: TurnOptions): void {
  checkKnownOptions('TurnOptions', options, TURN_OPTIONS);
  if (options.maxSteps !== undefined && (!Number.isInteger(options.maxSteps) || options.maxSteps < 1)) throw new TypeError('maxSteps must be a positive integer');
  if (options.timeouts !== undefined) checkTimeoutBudgets('TurnOptions', options.timeouts, true);
}

/**
 * What a resumption carries (`TurnQueue.resume`): the decisions about the calls that wait for
 * approval, and their signature when the queue has an approval secret.
 */
export interface TurnResume {
  readonly decisions: Readonly<Record<string, ApprovalDecision>>;
  readonly signed?: SignedDecisions;
}

/**
 * A turn's job as a process holds it. Its tenant has one form here: a name, or `undefined` for
 * none (the job's data spells it `null`: see {@link TurnJobData}).
 */
export interface TurnJob {
  /** The turn's id, also its job's id. */
  readonly turnId: string;
  /** The tenant whose toolset, provider and hooks the turn runs with (`undefined`: none, the kernel's own). */
  readonly tenant: string | undefined;
  /** The session whose history is the turn's context. */
  readonly session: string;
  /** The turn's input (none for a resumption). */
  readonly input: readonly Message[];
  readonly options: TurnOptions;
  /** Set for a resumption. */
  readonly resume?: TurnResume;
}

/**
 * A turn job's data in Redis: a {@link TurnJob} with `tenant: null` for none (JSON has no
 * `undefined`). Jobs of every version so far have this shape. @internal
 */
export interface TurnJobData extends Omit<TurnJob, 'tenant'> {
  readonly tenant: string | null;
}

/** A turn's job as its data in Redis. */
export function turnJobData(job: TurnJob): TurnJobData {
  const { turnId, tenant, session, input, options, resume } = job;
  return { turnId, tenant: tenant ?? null, session, input, options, ...(resume ? { resume } : {}) };
}

/**
 * A turn job's data as a {@link TurnJob}, checked: `null` (or no tenant at all) is no tenant.
 * @throws TypeError naming the first field that is not what a turn job holds.
 */
export function readTurnJob(data: unknown): TurnJob {
  const bad = (what: string): never => {
    throw new TypeError(`not a turn job: ${what}`);
  };
  if (typeof data !== 'object' || data === null) return bad('its data is not an object');
  const { turnId, tenant, session, input, options, resume } = data as Partial<Record<keyof TurnJobData, unknown>>;
  if (typeof turnId !== 'string' || turnId === '') bad('turnId is not a non-empty string');
  if (tenant !== null && tenant !== undefined && (typeof tenant !== 'string' || tenant === '')) bad('tenant is neither null nor a non-empty string');
  if (typeof session !== 'string' || session === '') bad('session is not a non-empty string');
  if (!Array.isArray(input) || input.some((m) => typeof m !== 'object' || m === null || typeof (m as Message).role !== 'string')) bad('input is not a list of messages');
  if (typeof options !== 'object' || options === null) bad('options is not an object');
  const { systemPrompt, maxSteps, provider, timeouts } = options as Record<string, unknown>;
  if (systemPrompt !== undefined && typeof systemPrompt !== 'string') bad('options.systemPrompt is not a string');
  if (maxSteps !== undefined && (!Number.isInteger(maxSteps) || (maxSteps as number) < 1)) bad('options.maxSteps is not a positive integer');
  if (provider !== undefined && typeof provider !== 'string') bad('options.provider is not a string');
  if (timeouts !== undefined) {
    try {
      checkTimeoutBudgets('TurnOptions', timeouts, true);
    } catch (error) {
      bad(`options.timeouts: ${(error as Error).message}`);
    }
  }
  if (resume !== undefined) {
    const decisions = (resume as Partial<TurnResume> | null)?.decisions;
    if (typeof decisions !== 'object' || decisions === null || Array.isArray(decisions)) bad('resume.decisions is not an object');
  }
  const job = data as TurnJobData;
  return {
    turnId: job.turnId,
    tenant: job.tenant ?? undefined,
    session: job.session,
    input: job.input,
    options: job.options,
    ...(job.resume === undefined ? {} : { resume: job.resume }),
  };
}

/**
 * A turn's state in its hash: `queued` (submitted), `running` (a worker took it), then one of
 * `done`, `failed`, `cancelled` (it ended; its terminal event is on its stream).
 */
export type TurnState = 'queued' | 'running' | 'done' | 'failed' | 'cancelled';

/** The states of a turn that has not ended. */
export type ActiveTurnState = Extract<TurnState, 'queued' | 'running'>;

/** Whether a turn in this state (as its hash holds it; `null`/`undefined`: no state) has not ended yet. */
export function isActive(state: string | null | undefined): state is ActiveTurnState {
  return state === 'queued' || state === 'running';
}

/** The state a turn ends in with this terminal event. */
export function endState(event: TerminalTurnEvent): Exclude<TurnState, ActiveTurnState> {
  return event.type === 'turn_end' ? 'done' : event.type === 'turn_failed' ? 'failed' : 'cancelled';
}

/**
 * Queues a turn: registers it in its session's submission order (its hash, `queued`), then adds
 * its job (the turn id as job id, one attempt, kept {@link TURN_TTL_SECONDS} after it ends).
 */
export async function submitTurn(redis: Redis, queue: Queue, keys: SessionKeys, job: TurnJob): Promise<void> {
  // The hash spells "no tenant" `''` (Lua has no nil to store).
  await redis.eval(SUBMIT_SCRIPT, 3, keys.seq, keys.pending, keys.turn(job.turnId), job.turnId, job.tenant ?? '', job.session, Date.now(), TURN_TTL_SECONDS);
  await queue.add(TURN_JOB_NAME, turnJobData(job), { jobId: job.turnId, attempts: 1, removeOnComplete: { age: TURN_TTL_SECONDS }, removeOnFail: { age: TURN_TTL_SECONDS } });
}

/**
 * Marks a turn ended with `event`, in one script: the event on its stream (unless the stream already
 * ends with a terminal event: the one its publisher sent), its state and result (a `turn_end`'s
 * result, else the event), out of its session's pending turns, its hash and stream kept
 * {@link TURN_TTL_SECONDS}. Once the state says ended, the stream ends with a terminal event.
 */
export async function finishTurn(redis: Redis, keys: SessionKeys, turnId: string, event: TerminalTurnEvent): Promise<void> {
  const result = JSON.stringify(event.type === 'turn_end' ? event.result : event);
  await redis.eval(FINISH_SCRIPT, 3, keys.turn(turnId), keys.pending, keys.events(turnId), turnId, endState(event), result, TURN_TTL_SECONDS, JSON.stringify(event));
}
