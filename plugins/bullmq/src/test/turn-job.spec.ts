/**
 * The turn contract without Redis: a turn job's data as every version wrote it is read back as
 * the same turn (its tenant in one form), bad data is refused naming the field, the states of a
 * turn's hash, and agent events as they go on a turn's stream.
 */
import type { AgentEvent, Message } from '@kosong/core';
import { expect } from 'chai';
import { fromAgentEvent } from '../turn-events.js';
import { endState, isActive, readTurnJob, turnJobData, type TurnJob } from '../turn-job.js';
import { call } from './support.js';

const input: Message = { role: 'user', content: [{ type: 'text', text: 'hello' }] };

describe('turn jobs: their data in Redis', () => {
  it('reads the data TurnQueue has always written, a tenant or null (no tenant)', () => {
    // Literally what `TurnQueue` put in its jobs before `turn-job.ts` existed.
    const written = [
      { turnId: 't1', tenant: 'acme', session: 's1', input: [input], options: { maxSteps: 3 } },
      { turnId: 't2', tenant: null, session: 's1', input: [], options: {}, resume: { decisions: { c1: { type: 'approve' } }, signed: { v: 1 } } },
    ];
    expect(readTurnJob(JSON.parse(JSON.stringify(written[0])))).to.deep.equal({ turnId: 't1', tenant: 'acme', session: 's1', input: [input], options: { maxSteps: 3 } });
    expect(readTurnJob(JSON.parse(JSON.stringify(written[1])))).to.deep.equal({
      turnId: 't2',
      tenant: undefined,
      session: 's1',
      input: [],
      options: {},
      resume: { decisions: { c1: { type: 'approve' } }, signed: { v: 1 } },
    });
  });

  it('writes what it reads: no tenant is null on the wire, undefined in the process', () => {
    const jobs: TurnJob[] = [
      { turnId: 't1', tenant: 'acme', session: 's1', input: [input], options: { systemPrompt: 'be brief', provider: 'echo' } },
      { turnId: 't2', tenant: undefined, session: 's1', input: [], options: {}, resume: { decisions: {} } },
    ];
    for (const job of jobs) {
      const wire = JSON.parse(JSON.stringify(turnJobData(job))) as unknown;
      expect((wire as { tenant: unknown }).tenant).to.equal(job.tenant ?? null);
      expect(readTurnJob(wire)).to.deep.equal(job);
    }
  });

  it('takes a job without a tenant field as one of no tenant', () => {
    expect(readTurnJob({ turnId: 't1', session: 's1', input: [input], options: {} }).tenant).to.equal(undefined);
  });

  const base = { turnId: 't1', tenant: 'acme', session: 's1', input: [input], options: {} };
  const bad: [string, unknown, RegExp][] = [
    ['no object', 'turn', /its data is not an object/],
    ['null', null, /its data is not an object/],
    ['no turn id', { ...base, turnId: undefined }, /turnId is not a non-empty string/],
    ['an empty turn id', { ...base, turnId: '' }, /turnId/],
    ['an empty tenant (no tenant is null)', { ...base, tenant: '' }, /tenant is neither null nor a non-empty string/],
    ['a tenant that is no string', { ...base, tenant: 7 }, /tenant/],
    ['no session', { ...base, session: undefined }, /session is not a non-empty string/],
    ['an input that is no list', { ...base, input: 'hello' }, /input is not a list of messages/],
    ['an input that holds no message', { ...base, input: [{ text: 'hello' }] }, /input is not a list of messages/],
    ['no options', { ...base, options: null }, /options is not an object/],
    ['a maxSteps that is no positive integer', { ...base, options: { maxSteps: 0 } }, /options\.maxSteps/],
    ['a system prompt that is no string', { ...base, options: { systemPrompt: 1 } }, /options\.systemPrompt/],
    ['a provider that is no string', { ...base, options: { provider: {} } }, /options\.provider/],
    ['a resumption without decisions', { ...base, resume: {} }, /resume\.decisions is not an object/],
    ['a resumption whose decisions are a list', { ...base, resume: { decisions: [] } }, /resume\.decisions/],
  ];
  for (const [what, data, message] of bad) {
    it(`refuses ${what}, naming the field`, () => {
      expect(() => readTurnJob(data))
        .to.throw(TypeError, /^not a turn job: /)
        .that.satisfies((error: Error) => message.test(error.message));
    });
  }
});

describe('turn states', () => {
  const states: [string | null | undefined, boolean][] = [
    ['queued', true],
    ['running', true],
    ['done', false],
    ['failed', false],
    ['cancelled', false],
    ['something else', false],
    [null, false],
    [undefined, false],
  ];
  for (const [state, active] of states) {
    it(`isActive(${String(state)}) is ${active}`, () => expect(isActive(state)).to.equal(active));
  }

  it('a terminal event ends its turn in its state', () => {
    const message: Message = { role: 'assistant', content: [] };
    expect(endState({ type: 'turn_end', result: { message, steps: 1, usage: { inputOther: 0, output: 0, inputCacheRead: 0, inputCacheCreation: 0 }, stopReason: 'no_tool_calls' } })).to.equal('done');
    expect(endState({ type: 'turn_failed', error: { name: 'Error', message: 'no' } })).to.equal('failed');
    expect(endState({ type: 'turn_cancelled', reason: 'stop' })).to.equal('cancelled');
  });
});

describe('agent events on a turn stream', () => {
  it("counts steps over the turn and serializes a retry's error; other events go as they are", () => {
    const toolCall = call('c1', 'echo');
    const events: [AgentEvent, unknown][] = [
      [{ type: 'step_start', step: 1, attempt: 1 }, { type: 'step_start', step: 4, attempt: 1 }],
      [{ type: 'tool_call', step: 2, toolCall }, { type: 'tool_call', step: 5, toolCall }],
      [{ type: 'approval_request', step: 1, toolCall, index: 0, replay: true }, { type: 'approval_request', step: 4, toolCall, index: 0, replay: true }],
      [
        { type: 'retry', step: 1, attempt: 1, nextAttempt: 2, delayMs: 10, error: Object.assign(new Error('busy'), { status: 529 }) },
        { type: 'retry', step: 4, attempt: 1, nextAttempt: 2, delayMs: 10, error: { name: 'Error', message: 'busy', status: 529 } },
      ],
    ];
    for (const [event, published] of events) expect(fromAgentEvent(event, 3)).to.deep.equal(published);
  });
});
