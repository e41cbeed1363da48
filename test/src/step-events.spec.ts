/**
 * Step events: read-only for every hook (no hook can change what another hook or the step sees),
 * built only when a hook listens, and the same whatever the step's shape (long text runs, calls
 * whose results are known at once).
 */
import { step, textPart, thinkPart, toolCall, toolCallPart, type HookErrorReport, type Message, type StepHooks, type StreamedMessagePart } from '@kosong/core';
import { MockChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';
import sinon from 'sinon';
import { FakeToolset, namesOf, recordingHooks } from './support.js';

const history: readonly Message[] = [{ role: 'user', content: [textPart('go')] }];
const base = { systemPrompt: 'You are a test.', history };

/** Whether `value` looks like a step event (every event carries the step's correlation ids). */
function isEvent(value: unknown): boolean {
  return typeof value === 'object' && value !== null && 'stepId' in value && 'provider' in value && 'model' in value;
}

describe('step() events', () => {
  afterEach(() => sinon.restore());

  it('are frozen for every hook, the per-part event included: a hook that writes to one fails, and the next hook sees it unchanged', async () => {
    const reports: HookErrorReport[] = [];
    const seen: [string, unknown][] = [];
    const vandal: StepHooks = {
      onStepStart: (event) => void ((event as { history: unknown }).history = []),
      onPart: (event) => void ((event as { part: unknown }).part = textPart('forged')),
      onToolCall: (event) => void ((event as { index: number }).index = 99),
      onToolResult: (event) => void ((event as { result: unknown }).result = undefined),
      onStepEnd: (event) => void (event.toolCalls as unknown[]).push('forged'),
      onCleanup: (event) => void ((event as { cancelled: boolean }).cancelled = true),
    };
    const witness: StepHooks = {
      onStepStart: (event) => void seen.push(['onStepStart', event.history]),
      onPart: (event) => void seen.push(['onPart', event.part]),
      onToolCall: (event) => void seen.push(['onToolCall', event.index]),
      onToolResult: (event) => void seen.push(['onToolResult', event.result.toolCallId]),
      onStepEnd: (event) => void seen.push(['onStepEnd', event.toolCalls.length]),
      onCleanup: (event) => void seen.push(['onCleanup', event.cancelled]),
    };
    const parts = [textPart('a'), toolCall('c1', 'fake', '{}')];
    const result = await step({
      ...base,
      provider: new MockChatProvider(parts),
      toolset: new FakeToolset(),
      hooks: [
        { name: 'vandal', hooks: vandal },
        { name: 'witness', hooks: witness },
      ],
      onHookError: (report) => void reports.push(report),
    });
    await result.toolResults();
    expect(seen).to.deep.equal([
      ['onStepStart', history],
      ['onPart', textPart('a')],
      ['onPart', toolCall('c1', 'fake', '{}')],
      ['onToolCall', 0],
      ['onStepEnd', 1],
      ['onToolResult', 'c1'],
      ['onCleanup', false],
    ]);
    // Every write threw (ES modules are strict) and was reported as the vandal's failure, never the step's.
    expect(reports.map((r) => [r.plugin, r.hook, r.kind, r.error instanceof TypeError])).to.deep.equal([
      ['vandal', 'onStepStart', 'threw', true],
      ['vandal', 'onPart', 'threw', true],
      ['vandal', 'onPart', 'threw', true],
      ['vandal', 'onToolCall', 'threw', true],
      ['vandal', 'onStepEnd', 'threw', true],
      ['vandal', 'onToolResult', 'threw', true],
      ['vandal', 'onCleanup', 'threw', true],
    ]);
    expect(result.toolCalls).to.deep.equal([toolCall('c1', 'fake', '{}')]);
  });

  it('are not built when no hook listens', async () => {
    const freeze = sinon.spy(Object, 'freeze');
    const result = await step({ ...base, provider: new MockChatProvider([textPart('a'), toolCall('c1', 'fake', '{}')]), toolset: new FakeToolset() });
    await result.toolResults();
    expect(freeze.args.filter(([value]) => isEvent(value))).to.deep.equal([]);
  });

  it('are built only for the hooks someone has', async () => {
    const freeze = sinon.spy(Object, 'freeze');
    const results: string[] = [];
    const result = await step({
      ...base,
      provider: new MockChatProvider([textPart('a'), toolCall('c1', 'fake', '{}'), toolCall('c2', 'fake', '{}')]),
      toolset: new FakeToolset(),
      hooks: [{ name: 'results only', hooks: { onToolResult: (event) => void results.push(event.toolCallId) } }],
    });
    await result.toolResults();
    const events = freeze.args.map(([value]) => value).filter(isEvent);
    expect(events).to.have.length(2);
    for (const event of events) expect(event).to.have.property('result');
    expect(results.sort()).to.deep.equal(['c1', 'c2']);
  });

  it('deliver the result of a call whose tool returned at once after the call itself, never before', async () => {
    const { entry, events } = recordingHooks();
    const toolset = new FakeToolset(() => ({ kind: 'sync' }));
    const result = await step({ ...base, provider: new MockChatProvider([toolCall('c1', 'fake', '{}'), textPart('after')]), toolset, hooks: [entry] });
    const results = await result.toolResults();
    expect(results.map((r) => r.toolCallId)).to.deep.equal(['c1']);
    const names = namesOf(events);
    expect(names.indexOf('onToolResult')).to.be.greaterThan(names.indexOf('onToolCall'));
    expect(names.at(-1)).to.equal('onCleanup');
  });

  it('carry whole parts merged from long runs (past every internal join), whatever the kind', async () => {
    const text = Array.from({ length: 3000 }, (_, i) => textPart(`t${i} `));
    const thinking = [...Array.from({ length: 2100 }, (_, i) => thinkPart(`k${i}`)), thinkPart('', 'sig'), thinkPart('after the signature')];
    const fragments = Array.from({ length: 2500 }, (_, i) => toolCallPart(String(i % 10)));
    const parts: StreamedMessagePart[] = [...text, ...thinking, toolCall('c1', 'fake', null), ...fragments, toolCallPart(null)];
    const ends: unknown[] = [];
    const result = await step({
      ...base,
      provider: new MockChatProvider(parts),
      toolset: new FakeToolset(),
      hooks: [{ name: 'end', hooks: { onStepEnd: (event) => void ends.push(event.message) } }],
    });
    await result.toolResults();
    expect(result.message.content).to.deep.equal([
      textPart(text.map((p) => p.text).join('')),
      thinkPart(Array.from({ length: 2100 }, (_, i) => `k${i}`).join(''), 'sig'),
      thinkPart('after the signature'),
    ]);
    expect(result.toolCalls).to.deep.equal([toolCall('c1', 'fake', fragments.map((p) => p.argumentsPart).join(''))]);
    expect(ends).to.deep.equal([result.message]);
  });
});
