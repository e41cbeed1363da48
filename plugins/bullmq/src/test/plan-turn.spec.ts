/**
 * The recovery decision of `AgentWorker` (`planTurn`), case by case, without Redis: what a worker
 * does with a turn given the session's turn progress, the step waiting for approval and the job.
 * Every branch has a row; so do the bad inputs (a session whose records do not add up).
 */
import { NoPendingApprovalError, addUsage, tokenUsage, toolOk, type AgentTurnResult, type Message, type PendingStep, type TokenUsage } from '@kosong/core';
import { expect } from 'chai';
import { planTurn, queuedTurnResult, type SessionProgress, type TurnAttempt, type TurnPlan } from '../plan-turn.js';
import type { QueuedTurnResult } from '../turn-events.js';
import { call } from './support.js';

const usage = (inputOther: number, output: number): TokenUsage => tokenUsage({ inputOther, output });
const input: Message = { role: 'user', content: [{ type: 'text', text: 'hello' }] };
const callA = call('a', 'echo');
const callB = call('b', 'sleep');
const withCalls: Message = { role: 'assistant', content: [{ type: 'text', text: 'calling' }], toolCalls: [callA, callB] };
const toolMessage: Message = { role: 'tool', toolCallId: 'a', content: [{ type: 'text', text: 'done' }] };
const answer: Message = { role: 'assistant', content: [{ type: 'text', text: 'the answer' }] };
const soFar = usage(10, 5);

function job(extra: Partial<TurnAttempt> = {}): TurnAttempt {
  return { turnId: 't2', tenant: 'acme', session: 's1', input: [input], options: {}, attempt: 1, ledgerTurn: undefined, maxSteps: 25, ...extra };
}

const resumption = (extra: Partial<TurnAttempt> = {}): TurnAttempt =>
  job({ input: [], resume: { decisions: { b: { type: 'approve' }, a: { type: 'deny' } } }, ...extra });

function progress(turn: string | undefined, steps: number, history: readonly Message[] = [input], used: unknown = soFar): SessionProgress {
  return { turn, steps, usage: used, history };
}

/** A step whose second call (`b`) waits; the first one settled. */
function pending(extra: Partial<PendingStep> = {}): PendingStep {
  return {
    stepId: 'step-x',
    step: 2,
    message: withCalls,
    results: [{ toolCallId: 'a', returnValue: toolOk({ output: 'done' }) }, undefined],
    usage: usage(3, 1),
    turnUsage: soFar,
    messageId: undefined,
    finishReason: 'tool_calls',
    deferredAt: 0,
    expiresAt: undefined,
    turn: { id: 't1', stepsBefore: 0 },
    ...extra,
  };
}

/** A pending step of an older version: it names no turn. */
function olderPending(): PendingStep {
  const { turn: _turn, ...older } = pending();
  return older;
}

/** The plan that resumes {@link pending} for {@link resumption} (the turn t1 deferred it), but for `extra`. */
function resumePlan(extra: Partial<Extract<TurnPlan, { kind: 'resume' }>> = {}): TurnPlan {
  return {
    kind: 'resume',
    pending: pending(),
    decisions: { b: { type: 'approve' }, a: { type: 'deny' } },
    ledgerTurn: 't1',
    stepOffset: 0,
    usage: soFar,
    ledger: { id: 't1', stepsBefore: 0 },
    agentMaxSteps: 25,
    ...extra,
  };
}

const waitingB = [{ toolCall: callB, index: 1, stepId: 'step-x' }];

describe('planTurn: what a worker does with the turn it takes', () => {
  const cases: [string, SessionProgress, PendingStep | undefined, TurnAttempt, TurnPlan][] = [
    [
      'a turn not under way runs with its input, from step 1, under its own id',
      progress('t1', 3, [input, answer]),
      undefined,
      job(),
      { kind: 'run', input: [input], stepOffset: 0, usage: tokenUsage(), ledger: { id: 't2', stepsBefore: 0 }, agentMaxSteps: 25 },
    ],
    [
      "a turn not under way ignores another turn's progress, even one that is not valid",
      progress('t1', Number.NaN, [], 'garbage'),
      undefined,
      job({ attempt: 2 }),
      { kind: 'run', input: [input], stepOffset: 0, usage: tokenUsage(), ledger: { id: 't2', stepsBefore: 0 }, agentMaxSteps: 25 },
    ],
    [
      'a turn (no resumption) on a session whose step waits runs: the agent refuses it',
      progress('t1', 1),
      pending(),
      job(),
      { kind: 'run', input: [input], stepOffset: 0, usage: tokenUsage(), ledger: { id: 't2', stepsBefore: 0 }, agentMaxSteps: 25 },
    ],
    [
      'a turn not under way keys its steps under the ledger turn an earlier attempt recorded',
      progress(undefined, 0, []),
      undefined,
      job({ attempt: 2, ledgerTurn: 't0' }),
      { kind: 'run', input: [input], stepOffset: 0, usage: tokenUsage(), ledger: { id: 't0', stepsBefore: 0 }, agentMaxSteps: 25 },
    ],
    [
      'under way with only its input in the session: runs again with no input, its usage kept',
      progress('t2', 0, [input]),
      undefined,
      job({ attempt: 2 }),
      { kind: 'run', input: [], stepOffset: 0, usage: soFar, ledger: { id: 't2', stepsBefore: 0 }, agentMaxSteps: 25 },
    ],
    [
      'under way after whole steps: goes on from them (the open step is completed from the ledger)',
      progress('t2', 2, [input, withCalls, toolMessage]),
      undefined,
      job({ attempt: 2, maxSteps: 5 }),
      { kind: 'run', input: [], stepOffset: 2, usage: soFar, ledger: { id: 't2', stepsBefore: 2 }, agentMaxSteps: 3 },
    ],
    [
      'under way without a usage stored: counts from zero',
      { ...progress('t2', 1, [input, withCalls, toolMessage]), usage: undefined },
      undefined,
      job({ attempt: 2 }),
      { kind: 'run', input: [], stepOffset: 1, usage: tokenUsage(), ledger: { id: 't2', stepsBefore: 1 }, agentMaxSteps: 24 },
    ],
    [
      'under way, its last step made no tool calls: it had ended, and ends as it did',
      progress('t2', 2, [input, withCalls, toolMessage, answer]),
      undefined,
      job({ attempt: 2 }),
      { kind: 'end', stepOffset: 2, result: { message: answer, steps: 2, usage: soFar, stopReason: 'no_tool_calls' } },
    ],
    [
      'under way at maxSteps: ends with its last assistant message',
      progress('t2', 2, [input, withCalls, toolMessage, withCalls, toolMessage]),
      undefined,
      job({ attempt: 2, maxSteps: 2 }),
      { kind: 'end', stepOffset: 2, result: { message: withCalls, steps: 2, usage: soFar, stopReason: 'max_steps' } },
    ],
    [
      'under way, a step of its own waits: it had ended waiting for approval, and ends so again',
      progress('t2', 1, [input, withCalls, toolMessage]),
      pending({ turn: { id: 't2', stepsBefore: 0 } }),
      job({ attempt: 2 }),
      { kind: 'end', stepOffset: 1, result: { message: withCalls, steps: 2, usage: addUsage(soFar, usage(3, 1)), stopReason: 'approval_required', pendingApprovals: waitingB } },
    ],
    [
      'a recovered resumption that had completed the step goes on with the turn it resumed, no decisions again',
      progress('t2', 2, [input, withCalls, toolMessage]),
      undefined,
      resumption({ attempt: 2, ledgerTurn: 't1' }),
      { kind: 'run', input: [], stepOffset: 2, usage: soFar, ledger: { id: 't1', stepsBefore: 2 }, agentMaxSteps: 23 },
    ],
    [
      'a recovered resumption whose turn deferred again ends waiting again',
      progress('t2', 2, [input, withCalls, toolMessage]),
      pending({ stepId: 'step-x', step: 3 }),
      resumption({ attempt: 2, ledgerTurn: 't1' }),
      { kind: 'end', stepOffset: 2, result: { message: withCalls, steps: 3, usage: addUsage(soFar, usage(3, 1)), stopReason: 'approval_required', pendingApprovals: waitingB } },
    ],
    [
      'a resumption completes the waiting step, going on with the turn that deferred it (recorded)',
      progress('t1', 1, [input, withCalls, toolMessage]),
      pending(),
      resumption(),
      resumePlan(),
    ],
    [
      'a recovered resumption drops the decisions its lost worker applied (calls that no longer wait)',
      progress('t1', 1, [input, withCalls, toolMessage]),
      pending(),
      resumption({ attempt: 2, ledgerTurn: 't1' }),
      resumePlan({ decisions: { b: { type: 'approve' } } }),
    ],
    [
      'a resumption of a step that names no turn (an older version) keys it under its own id, recording nothing',
      { ...progress(undefined, 1, [input, withCalls, toolMessage]), usage: undefined },
      olderPending(),
      resumption(),
      resumePlan({ pending: olderPending(), ledgerTurn: undefined, usage: tokenUsage(), ledger: { id: 't2', stepsBefore: 0 } }),
    ],
    [
      "a resumption of a step deferred after a recovery counts the turn's steps before the recovery",
      progress('t1', 4, [input, withCalls, toolMessage]),
      pending({ step: 2 }),
      resumption({ maxSteps: 10 }),
      resumePlan({ pending: pending({ step: 2 }), stepOffset: 3, ledger: { id: 't1', stepsBefore: 3 }, agentMaxSteps: 7 }),
    ],
  ];
  for (const [what, session, waiting, taken, expected] of cases) {
    it(what, () => {
      expect(planTurn(session, waiting, taken)).to.deep.equal(expected);
    });
  }

  const refusals: [string, SessionProgress, PendingStep | undefined, TurnAttempt, new (...args: never[]) => Error, RegExp][] = [
    ['a resumption with nothing waiting: NoPendingApprovalError', progress('t1', 1), undefined, resumption(), NoPendingApprovalError, /^Session "s1": no step waits for approval, there is nothing to resume$/],
    ['under way, a step count that is not a number', progress('t2', Number.NaN), undefined, job({ attempt: 2 }), Error, /^Session "s1" of tenant "acme": the turn progress in Redis is not valid: its turn's step count \(NaN\)/],
    ['under way, a negative step count', progress('t2', -1), undefined, job({ attempt: 2, tenant: undefined }), Error, /^Session "s1": the turn progress in Redis is not valid: its turn's step count \(-1\)/],
    ['a resumption, a fractional step count', progress('t1', 1.5), pending(), resumption(), Error, /step count \(1\.5\) is not a whole number/],
    ['a resumption of a step numbered past the steps of its turn', progress('t1', 1), pending({ step: 5 }), resumption(), Error, /the step waiting for approval is step 5, and its turn has 1 steps/],
    ['under way at maxSteps without an assistant message', progress('t2', 3, [input]), undefined, job({ attempt: 2, maxSteps: 3 }), Error, /its turn has 3 steps and no assistant message/],
  ];
  for (const [what, session, waiting, taken, type, message] of refusals) {
    it(`refuses ${what}`, () => {
      const plan = planTurn(session, waiting, taken);
      expect(plan.kind).to.equal('refuse');
      const { error, stepOffset } = plan as Extract<TurnPlan, { kind: 'refuse' }>;
      expect(error).to.be.instanceOf(type);
      expect(error.message).to.match(message);
      expect(stepOffset).to.equal(0);
    });
  }

  it('reads and changes nothing it is given', () => {
    const session = Object.freeze(progress('t1', 1, Object.freeze([input, withCalls, toolMessage])));
    const step = Object.freeze(pending());
    const taken = Object.freeze(resumption({ attempt: 2 }));
    const before = JSON.stringify([session, step, taken]);
    planTurn(session, step, taken);
    expect(JSON.stringify([session, step, taken])).to.equal(before);
  });
});

describe('queuedTurnResult: the result of a queued turn, over all its attempts', () => {
  const agentResult = (extra: Partial<AgentTurnResult>): AgentTurnResult => ({ message: answer, steps: 2, usage: usage(1, 1), stopReason: 'no_tool_calls', ...extra });
  const cases: [string, AgentTurnResult, PendingStep | undefined, number, QueuedTurnResult][] = [
    ['steps counted from the offset, the usage the turn\'s', agentResult({}), undefined, 3, { message: answer, steps: 5, usage: soFar, stopReason: 'no_tool_calls' }],
    ['max_steps as the agent says', agentResult({ stopReason: 'max_steps', message: withCalls }), undefined, 0, { message: withCalls, steps: 2, usage: soFar, stopReason: 'max_steps' }],
    [
      'approval_required names the waiting calls and counts the step\'s usage',
      agentResult({ stopReason: 'approval_required', message: withCalls }),
      pending(),
      1,
      { message: withCalls, steps: 3, usage: addUsage(soFar, usage(3, 1)), stopReason: 'approval_required', pendingApprovals: waitingB },
    ],
    [
      'approval_required without a waiting step (the session lost it) is passed on as it is',
      agentResult({ stopReason: 'approval_required', message: withCalls }),
      undefined,
      0,
      { message: withCalls, steps: 2, usage: soFar, stopReason: 'approval_required' },
    ],
  ];
  for (const [what, result, waiting, stepOffset, expected] of cases) {
    it(what, () => {
      expect(queuedTurnResult(result, waiting, stepOffset, soFar)).to.deep.equal(expected);
    });
  }
});
