/**
 * The recovery decision of `AgentWorker`, pure: what a worker that takes a turn does with it, given
 * what the session holds and the job. A first attempt runs the turn; a turn whose worker was lost
 * goes on from its last whole step (or, if it had ended before the loss was noticed, ends as it
 * did); a resumption completes the step that waits for approval.
 *
 * @module
 */
import { NoPendingApprovalError, addUsage, pendingApprovals, tokenUsage, type AgentTurnResult, type ApprovalDecision, type Message, type PendingStep, type TokenUsage } from '@kosong/core';
import type { SessionTurnProgress } from './redis-context.js';
import type { QueuedTurnResult } from './turn-events.js';
import type { TurnJob } from './turn-job.js';

/** What a session holds of its turns when a worker takes one: the stored turn progress, and the history. */
export interface SessionProgress extends SessionTurnProgress {
  readonly history: readonly Message[];
}

/** A turn's job as a worker takes it: the job, which attempt this is, and what its turn's hash says. */
export interface TurnAttempt extends TurnJob {
  /** This attempt's number (1: the first; more: the worker of an earlier one was lost, or handed it over). */
  readonly attempt: number;
  /** The turn the call ledger keys this turn's steps under, as an earlier attempt recorded it (a resumption's: the turn that deferred the step). */
  readonly ledgerTurn: string | undefined;
  /** Steps of the whole turn at most (the job's `maxSteps`, else the worker's). */
  readonly maxSteps: number;
}

/** What a plan that runs the agent says about the turn it goes on with. */
interface Running {
  /** Steps of the turn before the agent's own count starts: the agent's step n is the turn's step `stepOffset + n`. */
  readonly stepOffset: number;
  /** What the turn used before this attempt. */
  readonly usage: TokenUsage;
  /** The turn's identity in the call ledger (`AgentRunOptions.turn`): the id its steps are keyed under, and the steps before this run. */
  readonly ledger: { readonly id: string; readonly stepsBefore: number };
  /** The agent's `maxSteps` (in its own count). */
  readonly agentMaxSteps: number;
}

/**
 * What the worker does with a turn it takes (see {@link planTurn}):
 *
 * - `run`: `agent.run(input)`. The input is the job's on a turn not under way yet, none on a turn
 *   under way (the agent first completes a step the lost worker left open, from the call ledger).
 * - `resume`: `agent.resume({ decisions })`, completing the waiting step; with an approval secret
 *   the decisions are checked against `pending` first. `ledgerTurn`: the turn it goes on with, to
 *   record in the turn's hash (so that a later recovery goes on with it too), when that is another one.
 * - `end`: the turn had ended when its worker was lost, before it said so: it ends as it did.
 * - `refuse`: the turn fails with `error` (nothing to resume; the session's records do not add up).
 */
export type TurnPlan =
  | ({ readonly kind: 'run'; readonly input: readonly Message[] } & Running)
  | ({
      readonly kind: 'resume';
      readonly pending: PendingStep;
      readonly decisions: Readonly<Record<string, ApprovalDecision>>;
      readonly ledgerTurn: string | undefined;
    } & Running)
  | { readonly kind: 'end'; readonly stepOffset: number; readonly result: QueuedTurnResult }
  | { readonly kind: 'refuse'; readonly stepOffset: number; readonly error: Error };

/**
 * Decides what a worker does with a turn it takes: from the session's turn progress (is this turn
 * under way: did an earlier attempt add its input?), the step waiting for approval (if one does),
 * and the job. Pure: it reads and writes nothing. Its cases, in order:
 *
 * 1. under way, a step waits: the turn ended waiting for approval → `end` (`approval_required`);
 * 2. under way, its last step made no tool calls → `end` (`no_tool_calls`);
 * 3. under way, `maxSteps` steps done → `end` (`max_steps`);
 * 4. under way otherwise → `run` with no input, from its steps done;
 * 5. a resumption, a step waits → `resume` it, going on with the turn that deferred it;
 * 6. a resumption, nothing waits → `refuse` (`NoPendingApprovalError`);
 * 7. otherwise → `run` with the job's input.
 *
 * A progress whose step count is not a whole number, a waiting step numbered past the steps of its
 * turn, or a turn at `maxSteps` without an assistant message are refused with an `Error` naming the
 * session: Redis was written by something else than this package.
 */
export function planTurn(progress: SessionProgress, pending: PendingStep | undefined, job: TurnAttempt): TurnPlan {
  const underway = progress.turn === job.turnId;
  if (!underway && job.resume === undefined) return run(job, job.input, 0, tokenUsage(), job.ledgerTurn ?? job.turnId);
  if (!underway && pending === undefined) return refuse(new NoPendingApprovalError(`Session "${job.session}": no step waits for approval, there is nothing to resume`));
  if (!isWholeNumber(progress.steps)) return refuse(notValid(job, `its turn's step count (${String(progress.steps)}) is not a whole number`));
  const usage = progress.usage ? (progress.usage as TokenUsage) : tokenUsage();
  if (!underway) {
    // A resumption completes the waiting step of the turn that deferred it and goes on with that turn:
    // its steps and usage go on from that turn's (the pending step's number is its agent's own count).
    const waiting = pending!;
    const stepOffset = progress.steps + 1 - waiting.step;
    if (!isWholeNumber(stepOffset)) return refuse(notValid(job, `the step waiting for approval is step ${waiting.step}, and its turn has ${progress.steps} steps`));
    const ledgerTurn = waiting.turn?.id ?? job.turnId;
    // A first attempt passes the decisions as they were sent (one naming no waiting call fails the
    // turn, as `Agent.resume` does); a recovered one drops those its lost worker already applied.
    const decisions = job.attempt === 1 ? job.resume!.decisions : waitingOnly(job.resume!.decisions, waiting);
    return {
      kind: 'resume',
      pending: waiting,
      decisions,
      ledgerTurn: ledgerTurn === job.turnId ? undefined : ledgerTurn,
      ...running(job, stepOffset, usage, ledgerTurn),
    };
  }
  const steps = progress.steps;
  // This turn deferred calls, and its worker was lost before it said so: it ends as it did.
  if (pending) return { kind: 'end', stepOffset: steps, result: approvalRequired(pending, steps + 1, usage) };
  const last = progress.history.at(-1);
  if (steps > 0 && last?.role === 'assistant' && !last.toolCalls?.length) return { kind: 'end', stepOffset: steps, result: { message: last, steps, usage, stopReason: 'no_tool_calls' } };
  if (steps >= job.maxSteps) {
    const lastAssistant = progress.history.findLast((m) => m.role === 'assistant');
    if (!lastAssistant) return refuse(notValid(job, `its turn has ${steps} steps and no assistant message`));
    return { kind: 'end', stepOffset: steps, result: { message: lastAssistant, steps, usage, stopReason: 'max_steps' } };
  }
  return run(job, [], steps, usage, job.ledgerTurn ?? job.turnId);
}

/**
 * A queued turn's result from its agent's: steps counted over the whole turn (from `stepOffset`),
 * `usage` the turn's, the waiting calls named when it ends waiting for approval (`pending`: the
 * session's waiting step after the run).
 */
export function queuedTurnResult(result: AgentTurnResult, pending: PendingStep | undefined, stepOffset: number, usage: TokenUsage): QueuedTurnResult {
  const steps = stepOffset + result.steps;
  if (result.stopReason === 'approval_required' && pending) return approvalRequired(pending, steps, usage);
  return { message: result.message, steps, usage, stopReason: result.stopReason };
}

function run(job: TurnAttempt, input: readonly Message[], stepOffset: number, usage: TokenUsage, ledgerTurn: string): TurnPlan {
  return { kind: 'run', input, ...running(job, stepOffset, usage, ledgerTurn) };
}

function running(job: TurnAttempt, stepOffset: number, usage: TokenUsage, ledgerTurn: string): Running {
  return { stepOffset, usage, ledger: { id: ledgerTurn, stepsBefore: stepOffset }, agentMaxSteps: job.maxSteps - stepOffset };
}

function refuse(error: Error): TurnPlan {
  return { kind: 'refuse', stepOffset: 0, error };
}

function notValid(job: TurnAttempt, why: string): Error {
  const where = `Session "${job.session}"${job.tenant === undefined ? '' : ` of tenant "${job.tenant}"`}`;
  return new Error(`${where}: the turn progress in Redis is not valid: ${why}`);
}

function isWholeNumber(value: number): boolean {
  return Number.isSafeInteger(value) && value >= 0;
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
