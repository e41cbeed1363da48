/**
 * Step events: read-only for every hook (no hook can change what another hook or the step sees),
 * built only when a hook listens, and the same whatever the step's shape (long text runs, calls
 * whose results are known at once).
 */
import { step, textPart, thinkPart, toolCall, toolCallPart, type HookErrorReport, type Message, type StepHooks, type StreamedMessagePart, type ToolCall } from '@kosong/core';
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
    const parts = [textPart('a'), toolCall('c1', 'fake', '{}')];
    const result = await step({ ...base, provider: new MockChatProvider(parts), toolset: new FakeToolset() });
    await result.toolResults();
    expect(freeze.args.filter(([value]) => isEvent(value))).to.deep.equal([]);
    // A per-part event (not frozen itself) freezes its part: no part was frozen, so none was built.
    for (const part of parts) expect(Object.isFrozen(part)).to.equal(false);
  });

  it('hand onToolCall and onToolResult a frozen call: no hook can change the arguments the tool runs with, or the message\'s call', async () => {
    const reports: HookErrorReport[] = [];
    const forge = (call: ToolCall): void => {
      (call.function as { arguments: string | null }).arguments = '{"evil":1}';
    };
    const vandal: StepHooks = { onToolCall: (event) => forge(event.toolCall), onToolResult: (event) => forge(event.toolCall) };
    const toolset = new FakeToolset(() => ({ kind: 'sync' }));
    // One call streamed whole, one merged from fragments (a new object the step builds).
    const parts = [toolCall('c1', 'fake', '{"a":1}'), toolCall('c2', 'fake', null), toolCallPart('{"b":'), toolCallPart('2}')];
    const result = await step({
      ...base,
      provider: new MockChatProvider(parts),
      toolset,
      hooks: [{ name: 'vandal', hooks: vandal }],
      onHookError: (report) => void reports.push(report),
    });
    await result.toolResults();
    expect(toolset.records.map((r) => r.call.function.arguments)).to.deep.equal(['{"a":1}', '{"b":2}']);
    expect(result.toolCalls.map((c) => c.function.arguments)).to.deep.equal(['{"a":1}', '{"b":2}']);
    expect(reports.map((r) => [r.hook, r.kind, r.error instanceof TypeError]).sort()).to.deep.equal([
      ['onToolCall', 'threw', true],
      ['onToolCall', 'threw', true],
      ['onToolResult', 'threw', true],
      ['onToolResult', 'threw', true],
    ]);
  });

  it('hand onToolResult a frozen result and onStepEnd a frozen message and usage: no hook can change what toolResults() and result.message return', async () => {
    const reports: HookErrorReport[] = [];
    const attempts: string[] = [];
    /** Tries a write; a write that succeeds is recorded (and fails the test below). */
    const tryWrite = (what: string, write: () => void): void => {
      try {
        write();
        attempts.push(what);
      } catch (error) {
        if (!(error instanceof TypeError)) throw error;
      }
    };
    const vandal: StepHooks = {
      onToolResult: (event) => {
        const result = event.result as unknown as { toolCallId: string; returnValue: Record<string, unknown> };
        tryWrite('result.toolCallId', () => (result.toolCallId = 'forged'));
        tryWrite('returnValue.isError', () => (result.returnValue['isError'] = true));
        const output = result.returnValue['output'] as { text: string }[];
        tryWrite('output.push', () => void output.push({ text: 'forged' }));
        tryWrite('output[0].text', () => (output[0]!.text = 'forged'));
        tryWrite('display.push', () => void (result.returnValue['display'] as unknown[]).push({ type: 'brief', text: 'forged' }));
        tryWrite('extras (nested)', () => ((result.returnValue['extras'] as { meta: { n: number[] } }).meta.n[0] = 9));
      },
      onStepEnd: (event) => {
        const message = event.message as unknown as { content: { text: string }[]; toolCalls: unknown[] };
        tryWrite('message.content.push', () => void message.content.push({ text: 'forged' }));
        tryWrite('message.content[0].text', () => (message.content[0]!.text = 'forged'));
        tryWrite('message.toolCalls.pop', () => void message.toolCalls.pop());
        tryWrite('usage.output', () => ((event.usage as { output: number }).output = 1e9));
      },
    };
    const toolset = {
      tools: [{ name: 'fake', description: 'A fake tool.', parameters: { type: 'object' } }],
      handle: (call: ToolCall) => ({
        toolCallId: call.id,
        returnValue: { isError: false, output: [textPart('out')], message: '', display: [{ type: 'brief' as const, text: 'ran' }], extras: { meta: { n: [1] } } },
      }),
    };
    const usage = { inputOther: 1, output: 2, inputCacheRead: 0, inputCacheCreation: 0 };
    const provider = new MockChatProvider([textPart('hello'), toolCall('c1', 'fake', '{}')], { usage });
    const result = await step({ ...base, provider, toolset, hooks: [{ name: 'vandal', hooks: vandal }], onHookError: (report) => void reports.push(report) });
    const results = await result.toolResults();
    await new Promise((resolve) => setImmediate(resolve)); // onToolResult is not awaited
    expect(attempts, 'writes that succeeded').to.deep.equal([]);
    expect(reports).to.deep.equal([]);
    expect(results).to.deep.equal([
      { toolCallId: 'c1', returnValue: { isError: false, output: [textPart('out')], message: '', display: [{ type: 'brief', text: 'ran' }], extras: { meta: { n: [1] } } } },
    ]);
    expect(result.message.content).to.deep.equal([textPart('hello')]);
    expect(result.message.toolCalls).to.have.length(1);
    expect(result.usage?.output).to.equal(2);
  });

  it('freeze nothing without a hook: a step without hooks returns its message and results as plain objects', async () => {
    const toolset = new FakeToolset(() => ({ kind: 'sync' }));
    const result = await step({ ...base, provider: new MockChatProvider([textPart('hello'), toolCall('c1', 'fake', '{}')]), toolset });
    const [first] = await result.toolResults();
    expect(Object.isFrozen(result.message)).to.equal(false);
    expect(Object.isFrozen(first)).to.equal(false);
  });

  it('the per-part event is read-only: no hook can change a field or the part (nested data included) for the next hook or the step', async () => {
    const reports: HookErrorReport[] = [];
    const seen: unknown[] = [];
    const context = { user: 'u1' };
    const forged = textPart('forged');
    /** Fails the hook (a reported failure) unless `attempt` throws a TypeError. */
    const mustThrow = (what: string, attempt: () => unknown): void => {
      try {
        attempt();
      } catch (error) {
        if (error instanceof TypeError) return;
        throw error;
      }
      throw new Error(`${what} succeeded`);
    };
    const vandal: StepHooks = {
      onPart: (event) => {
        const writable = event as unknown as Record<string, unknown>;
        for (const field of ['stepId', 'tenant', 'provider', 'model', 'context', 'part']) mustThrow(`event.${field} =`, () => (writable[field] = forged));
        delete writable['part']; // not an own property: nothing to delete
        const part = event.part;
        if (part.type === 'text') mustThrow('part.text =', () => ((part as { text: string }).text = 'forged'));
        if (part.type === 'function') {
          mustThrow('function.arguments =', () => ((part.function as { arguments: string | null }).arguments = '{"x":1}'));
          mustThrow('extras (nested) =', () => ((part.extras as { meta: { depth: number[] } }).meta.depth[0] = 9));
        }
        // A property of its own can be added (the event is extensible); it changes none of the fields.
        writable['note'] = 'added';
      },
    };
    const witness: StepHooks = {
      onPart: (event) => {
        const { stepId, tenant, provider, model, context: ctx, part } = event;
        seen.push({ stepId: typeof stepId, tenant, provider, model, context: ctx, part, json: JSON.parse(JSON.stringify(event)) as unknown });
      },
    };
    const call = { ...toolCall('c1', 'fake', '{}'), extras: { meta: { depth: [1, 2] } } };
    const parts = [textPart('a'), call];
    const result = await step({
      ...base,
      provider: new MockChatProvider(parts),
      toolset: new FakeToolset(),
      tenant: 't1',
      context,
      hooks: [
        { name: 'vandal', hooks: vandal },
        { name: 'witness', hooks: witness },
      ],
      onHookError: (report) => void reports.push(report),
    });
    await result.toolResults();
    expect(reports).to.deep.equal([]);
    const expected = (part: StreamedMessagePart) => ({ stepId: 'string', tenant: 't1', provider: 'mock', model: 'mock', context, part });
    expect(seen).to.deep.equal([
      { ...expected(textPart('a')), json: { stepId: result.stepId, tenant: 't1', provider: 'mock', model: 'mock', context, part: textPart('a') } },
      { ...expected(call), json: { stepId: result.stepId, tenant: 't1', provider: 'mock', model: 'mock', context, part: call } },
    ]);
    expect(result.message.content).to.deep.equal([textPart('a')]);
    expect(result.toolCalls).to.deep.equal([call]);
    expect(call.extras.meta.depth).to.deep.equal([1, 2]);
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
