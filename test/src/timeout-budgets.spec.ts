/**
 * Timeout budgets (issue 24, part 3): a step's `stepMs`, `idleMs` and `toolCallMs`, an agent turn's
 * `turnMs`, each ending with a `TimeoutBudgetError` naming it, through the step's one abort path.
 */
import {
  Agent,
  Kernel,
  TimeoutBudgetError,
  definePlugin,
  emptyToolset,
  requireApproval,
  step,
  textPart,
  toolCall,
  type ChatProvider,
  type HookErrorReport,
  type Message,
  type StepHooks,
  type StreamedMessage,
  type StreamedMessagePart,
  type TimeoutBudgets,
  type ToolCall,
  type ToolResult,
} from '@kosong/core';
import { abortableDelay } from '@kosong/core/runtime';
import { MockChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';
import sinon from 'sinon';
import { FakeToolset, deepFreeze, namesOf, only, recordingHooks, sleep, type CleanupEvent, type StepEndEvent } from './support.js';

const history: readonly Message[] = deepFreeze([{ role: 'user', content: [textPart('go')] }]);
const call = (id: string, args = '{}'): ToolCall => toolCall(id, 'fake', args);
const base = { systemPrompt: 'You are a test.', history };

/** One response of a {@link scriptedModel}: its parts, and the wait before each (default: none). */
interface Response {
  readonly parts: readonly StreamedMessagePart[];
  /** The wait before part i (the last entry holds for the rest). */
  readonly gaps?: readonly number[];
  /** Whether the stream ignores its abort signal (a misbehaving provider). */
  readonly ignoreAbort?: boolean;
}

/**
 * A model answering the nth request with `responses[n]` (the last one again after that), each part
 * after its gap; it records the signal of each request.
 */
function scriptedModel(responses: readonly Response[]): ChatProvider & { readonly signals: (AbortSignal | undefined)[]; readonly calls: number } {
  const signals: (AbortSignal | undefined)[] = [];
  const provider = {
    name: 'scripted',
    modelName: 'scripted-1',
    thinkingEffort: undefined,
    generation: {},
    signals,
    get calls() {
      return signals.length;
    },
    generate(...[, , , options]: Parameters<ChatProvider['generate']>): Promise<StreamedMessage> {
      const response = responses[Math.min(signals.length, responses.length - 1)]!;
      signals.push(options?.signal);
      const signal = response.ignoreAbort === true ? undefined : options?.signal;
      if (signal?.aborted) return Promise.reject(signal.reason);
      const stream: StreamedMessage = {
        id: 'scripted',
        usage: undefined,
        finishReason: undefined,
        traceId: undefined,
        async *[Symbol.asyncIterator]() {
          const gaps = response.gaps ?? [];
          for (let i = 0; i < response.parts.length; i++) {
            const gap = gaps[Math.min(i, gaps.length - 1)] ?? 0;
            if (gap > 0) await abortableDelay(gap, signal);
            if (signal?.aborted) throw signal.reason;
            yield response.parts[i]!;
          }
        },
      };
      return Promise.resolve(stream);
    },
    withThinking: () => provider,
    withGeneration: () => provider,
  };
  return provider;
}

/** What a promise rejected with (fails if it resolved). */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

/** Checks a budget error's fields. */
function expectBudget(error: unknown, fields: Partial<Pick<TimeoutBudgetError, 'budget' | 'limitMs' | 'stepId' | 'turnId'>>): asserts error is TimeoutBudgetError {
  expect(TimeoutBudgetError.isInstance(error), String(error)).to.equal(true);
  expect(error).to.be.instanceOf(TimeoutBudgetError).and.include(fields);
  expect((error as Error).name).to.equal('TimeoutBudgetError');
}

describe('timeout budgets', () => {
  let hookErrors: HookErrorReport[];
  const onHookError = (report: HookErrorReport): void => void hookErrors.push(report);
  beforeEach(() => {
    hookErrors = [];
  });
  afterEach(() => sinon.restore());

  describe('bad options are a TypeError at the call', () => {
    const bad: [string, unknown, RegExp][] = [
      ['an unknown budget', { stepMS: 100 }, /unknown timeout budget "stepMS"/],
      ['a negative budget', { stepMs: -1 }, /timeouts\.stepMs must be a positive number/],
      ['NaN', { idleMs: Number.NaN }, /timeouts\.idleMs .*got NaN/],
      ['zero', { toolCallMs: 0 }, /timeouts\.toolCallMs must be a positive number/],
      ['infinity', { stepMs: Number.POSITIVE_INFINITY }, /got Infinity/],
      ['a value a timer cannot wait', { stepMs: 2 ** 31 }, /at most 2147483647/],
      ['a string', { stepMs: '100' }, /got "100"/],
      ['not an object', 100, /timeouts must be an object/],
      ["a turn's budget on a step", { turnMs: 100 }, /unknown timeout budget "turnMs" \(a turn's budget/],
    ];
    for (const [what, timeouts, message] of bad) {
      it(`step(): ${what}; the provider is not asked`, async () => {
        const provider = scriptedModel([{ parts: [textPart('hi')] }]);
        const error = await rejection(step({ ...base, provider, toolset: emptyToolset, timeouts: timeouts as TimeoutBudgets }));
        expect(error).to.be.instanceOf(TypeError);
        expect((error as Error).message).to.match(message);
        expect(provider.calls).to.equal(0);
      });
    }

    it('Agent: in the constructor, and in a turn before anything runs', async () => {
      const provider = scriptedModel([{ parts: [textPart('hi')] }]);
      const stepFn = (options: Parameters<ConstructorParameters<typeof Agent>[0]['step']>[0]) => step({ ...options, provider, toolset: emptyToolset });
      expect(() => new Agent({ systemPrompt: 's', step: stepFn, timeouts: { turnMs: -5 } })).to.throw(TypeError, /Agent: timeouts\.turnMs must be a positive number/);
      expect(() => new Agent({ systemPrompt: 's', step: stepFn, timeouts: { turn: 5 } as TimeoutBudgets })).to.throw(TypeError, /unknown timeout budget "turn"/);
      const agent = new Agent({ systemPrompt: 's', step: stepFn });
      const error = await rejection(agent.run('hi', { timeouts: { idleMs: Number.NaN } }));
      expect(error).to.be.instanceOf(TypeError).with.property('message').that.matches(/Agent\.run\(\): timeouts\.idleMs/);
      expect(provider.calls).to.equal(0);
      expect(agent.context.history).to.have.length(0);
    });

    it('through the kernel: kernel.agent() and runner.step()', async () => {
      const kernel = new Kernel();
      await kernel.use(definePlugin({ name: 'model', setup: (ctx) => ctx.bindChatProvider('m', new MockChatProvider([textPart('hi')]), { default: true }) }));
      expect(() => kernel.agent({ systemPrompt: 's', timeouts: { toolCallMs: 0 } })).to.throw(TypeError, /toolCallMs/);
      const error = await rejection(kernel.runner().step({ ...base, timeouts: { stepMs: -1 } }));
      expect(error).to.be.instanceOf(TypeError).with.property('message').that.matches(/stepMs/);
      await kernel.dispose();
    });
  });

  describe('stepMs', () => {
    it('runs out while the model streams: the step rejects with the error, the provider and the running tool are aborted with it, one end and one cleanup', async () => {
      const provider = scriptedModel([{ parts: [call('a'), ...Array.from({ length: 100 }, () => textPart('.'))], gaps: [0, 10] }]);
      const toolset = new FakeToolset(() => ({ kind: 'untilAborted' }));
      const { entry, events } = recordingHooks();
      const started = performance.now();
      const error = await rejection(step({ ...base, provider, toolset, stepId: 'step-1', hooks: [entry], timeouts: { stepMs: 60 } }));
      expectBudget(error, { budget: 'step', limitMs: 60, stepId: 'step-1' });
      expect(error.toolCall).to.equal(undefined);
      expect(error.message).to.equal('Step step-1 ran out of its time budget (stepMs: 60) and was aborted');
      expect(performance.now() - started).to.be.within(55, 600);
      expect(provider.signals[0]?.aborted).to.equal(true);
      expect(provider.signals[0]?.reason).to.equal(error);
      expect(toolset.records).to.have.length(1);
      expect(toolset.records[0]!.sawAbort).to.equal(true);
      expect(toolset.records[0]!.context.signal.reason).to.equal(error);
      expect(toolset.running).to.equal(0);
      expect(namesOf(events).filter((name) => name === 'onStepEnd' || name === 'onCleanup')).to.deep.equal(['onStepEnd', 'onCleanup']);
      expect(namesOf(events).at(-1)).to.equal('onCleanup');
      expect(only<StepEndEvent>(events, 'onStepEnd')).to.include({ error, aborted: true });
      expect(only<CleanupEvent>(events, 'onCleanup')).to.include({ cancelled: true }).and.have.property('leaked').that.deep.equals([]);
    });

    it('runs out after the step returned, while its tools run: toolResults() rejects with it, the tools reclaimed', async () => {
      const provider = scriptedModel([{ parts: [call('fast'), call('slow')] }]);
      const toolset = new FakeToolset((c) => (c.id === 'fast' ? { kind: 'sync' } : { kind: 'settleAfterAbort', ms: 10 }));
      const { entry, events } = recordingHooks();
      const result = await step({ ...base, provider, toolset, hooks: [entry], timeouts: { stepMs: 40 } });
      expect(only<StepEndEvent>(events, 'onStepEnd')).to.include({ error: undefined, aborted: false });
      const error = await rejection(result.toolResults());
      expectBudget(error, { budget: 'step', limitMs: 40, stepId: result.stepId });
      expect(toolset.records[1]!.sawAbort).to.equal(true);
      expect(toolset.running).to.equal(0);
      expect(only<CleanupEvent>(events, 'onCleanup')).to.include({ cancelled: true });
      expect(await rejection(result.toolResults())).to.equal(error);
    });

    it('a tool that ignores its signal is reported as leaked after the cleanup deadline; the step does not wait for it', async () => {
      const provider = scriptedModel([{ parts: [call('stubborn'), ...Array.from({ length: 50 }, () => textPart('.'))], gaps: [0, 10] }]);
      const toolset = new FakeToolset(() => ({ kind: 'ignoreAbort', ms: 400 }));
      const { entry, events } = recordingHooks();
      const started = performance.now();
      const error = await rejection(step({ ...base, provider, toolset, hooks: [entry], cleanupTimeoutMs: 30, timeouts: { stepMs: 40 } }));
      expectBudget(error, { budget: 'step', limitMs: 40 });
      expect(performance.now() - started).to.be.below(350);
      const cleanup = only<CleanupEvent>(events, 'onCleanup');
      expect(cleanup.leaked.map((c) => c.id)).to.deep.equal(['stubborn']);
      expect(cleanup.cancelled).to.equal(true);
      await sleep(400); // the stubborn tool finishes before the test ends
    });

    it("the caller's signal still aborts a step with budgets, with the caller's reason", async () => {
      const controller = new AbortController();
      const provider = scriptedModel([{ parts: Array.from({ length: 100 }, () => textPart('.')), gaps: [5] }]);
      const { entry, events } = recordingHooks();
      const reason = new Error('user pressed stop');
      setTimeout(() => controller.abort(reason), 20);
      const error = await rejection(step({ ...base, provider, toolset: emptyToolset, hooks: [entry], signal: controller.signal, timeouts: { stepMs: 5_000, idleMs: 1_000 } }));
      expect(error).to.equal(reason);
      expect(provider.signals[0]?.reason).to.equal(reason);
      expect(only<StepEndEvent>(events, 'onStepEnd')).to.include({ error: reason, aborted: true });
    });

    it('the agent loop does not retry it: the turn ends with the error after one request', async () => {
      const provider = scriptedModel([{ parts: Array.from({ length: 100 }, () => textPart('.')), gaps: [10] }]);
      const agent = new Agent({ systemPrompt: 's', step: (options) => step({ ...options, provider, toolset: emptyToolset }), timeouts: { stepMs: 30 } });
      const error = await rejection(agent.run('hi'));
      expectBudget(error, { budget: 'step', limitMs: 30 });
      expect(provider.calls).to.equal(1);
      expect(agent.context.history).to.have.length(1); // the input only: nothing of the aborted step
    });
  });

  describe('idleMs', () => {
    it('a silence between two parts longer than the budget aborts the step with the idle error', async () => {
      const provider = scriptedModel([{ parts: [textPart('a'), textPart('b'), textPart('c')], gaps: [0, 0, 500] }]);
      const { entry, events } = recordingHooks();
      const started = performance.now();
      const error = await rejection(step({ ...base, provider, toolset: emptyToolset, stepId: 's-idle', hooks: [entry], timeouts: { idleMs: 40 } }));
      expectBudget(error, { budget: 'idle', limitMs: 40, stepId: 's-idle' });
      expect(error.message).to.match(/waited longer than its idle budget .*\(idleMs: 40\)/);
      expect(performance.now() - started).to.be.within(38, 400);
      expect(provider.signals[0]?.reason).to.equal(error);
      expect(namesOf(events).filter((name) => name === 'onPart')).to.have.length(2);
      expect(only<StepEndEvent>(events, 'onStepEnd')).to.include({ error, aborted: true });
      expect(namesOf(events).at(-1)).to.equal('onCleanup');
    });

    it('the wait for the first part counts', async () => {
      const provider = scriptedModel([{ parts: [textPart('late')], gaps: [500] }]);
      const error = await rejection(step({ ...base, provider, toolset: emptyToolset, timeouts: { idleMs: 30 } }));
      expectBudget(error, { budget: 'idle', limitMs: 30 });
    });

    it('a provider that ignores its signal still lets the step reject promptly', async () => {
      const provider = scriptedModel([{ parts: [textPart('a'), textPart('b')], gaps: [0, 600], ignoreAbort: true }]);
      const started = performance.now();
      const error = await rejection(step({ ...base, provider, toolset: emptyToolset, timeouts: { idleMs: 30 } }));
      expectBudget(error, { budget: 'idle' });
      expect(performance.now() - started).to.be.below(400);
      await sleep(600);
    });

    it('parts that keep coming, however long the stream, never trip it', async () => {
      const provider = scriptedModel([{ parts: Array.from({ length: 30 }, (_, i) => textPart(`${i}`)), gaps: [8] }]);
      const result = await step({ ...base, provider, toolset: emptyToolset, timeouts: { idleMs: 60 } });
      expect(result.message.content).to.have.length(1);
    });

    it('time spent in an awaited onPart hook does not count as silence', async () => {
      const provider = scriptedModel([{ parts: [textPart('a'), textPart('b'), textPart('c')] }]);
      const slowHook: StepHooks = { onPart: () => sleep(80) };
      const result = await step({ ...base, provider, toolset: emptyToolset, hooks: [{ name: 'slow', hooks: slowHook }], hookTimeoutMs: 1_000, onHookError, timeouts: { idleMs: 30 } });
      expect(result.message.content).to.deep.equal([textPart('abc')]);
      expect(hookErrors).to.deep.equal([]);
    });

    it('fires after idleMs to 1.25 × idleMs of silence, with one timer for the whole stream (fake clock)', async () => {
      const clock = sinon.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
      const provider = scriptedModel([{ parts: [textPart('a'), textPart('never')], gaps: [0, 10_000] }]);
      let settled: unknown;
      const pending = step({ ...base, provider, toolset: emptyToolset, timeouts: { idleMs: 100 } }).then(
        () => (settled = 'resolved'),
        (error: unknown) => (settled = error),
      );
      await clock.tickAsync(0); // the request, and the first part
      // Two timers: the provider's 10 s wait, and the idle budget's one check timer.
      expect(clock.countTimers()).to.equal(2);
      await clock.tickAsync(99);
      expect(settled).to.equal(undefined);
      await clock.tickAsync(26);
      expectBudget(settled, { budget: 'idle', limitMs: 100 });
      await pending;
      expect(clock.countTimers()).to.equal(0);
    });
  });

  describe('toolCallMs', () => {
    it('a call out of its budget gets an error result naming it, its own signal aborted with the error; the other calls and the step go on', async () => {
      const provider = scriptedModel([{ parts: [call('slow'), call('fast')] }]);
      const toolset = new FakeToolset((c) => (c.id === 'slow' ? { kind: 'untilAborted' } : { kind: 'async', ms: 5 }));
      const { entry, events } = recordingHooks();
      const result = await step({ ...base, provider, toolset, stepId: 'step-t', hooks: [entry], timeouts: { toolCallMs: 40 } });
      const results = await result.toolResults();
      expect(results[0]!.returnValue).to.include({
        isError: true,
        message: 'Tool `fake` timed out: it ran longer than its time budget (toolCallMs: 40) and was aborted. Its effects may be incomplete.',
      });
      expect(results[0]!.returnValue.display).to.deep.equal([{ type: 'brief', text: 'Timeout' }]);
      expect(results[1]!.returnValue).to.include({ isError: false, output: 'fast:{}' });
      const slow = toolset.records[0]!;
      expect(slow.sawAbort).to.equal(true);
      expectBudget(slow.context.signal.reason, { budget: 'toolCall', limitMs: 40, stepId: 'step-t' });
      expect((slow.context.signal.reason as TimeoutBudgetError).toolCall).to.equal(result.toolCalls[0]);
      expect((slow.context.signal.reason as Error).message).to.equal('Tool call slow (fake) of step step-t ran out of its time budget (toolCallMs: 40) and was aborted');
      expect(toolset.records[1]!.sawAbort).to.equal(false);
      expect(toolset.records[1]!.context.signal.aborted).to.equal(false);
      const heard = events.filter(([name]) => name === 'onToolResult').map(([, e]) => (e as { result: ToolResult }).result);
      expect(heard.map((r) => r.toolCallId)).to.deep.equal(['fast', 'slow']);
      expect(heard[1]!.returnValue.isError).to.equal(true);
      expect(only<StepEndEvent>(events, 'onStepEnd')).to.include({ error: undefined, aborted: false });
      expect(only<CleanupEvent>(events, 'onCleanup')).to.include({ cancelled: false }).and.have.property('leaked').that.deep.equals([]);
    });

    it('a tool that ignores its signal gets the error result after the cleanup deadline, and is reported as leaked', async () => {
      const provider = scriptedModel([{ parts: [call('stubborn')] }]);
      const toolset = new FakeToolset(() => ({ kind: 'ignoreAbort', ms: 400 }));
      const { entry, events } = recordingHooks();
      const started = performance.now();
      const result = await step({ ...base, provider, toolset, hooks: [entry], cleanupTimeoutMs: 30, timeouts: { toolCallMs: 30 } });
      const [only1] = await result.toolResults();
      expect(performance.now() - started).to.be.within(55, 350);
      expect(only1!.returnValue.message).to.match(/^Tool `fake` timed out/);
      const cleanup = only<CleanupEvent>(events, 'onCleanup');
      expect(cleanup.leaked.map((c) => c.id)).to.deep.equal(['stubborn']);
      expect(cleanup.cancelled).to.equal(false);
      await sleep(400); // its late result changes nothing
      expect(await result.toolResults()).to.deep.equal([only1]);
    });

    it('the budget starts when the toolset is handed the call (after its approval), and a call within it is untouched', async () => {
      const provider = scriptedModel([{ parts: [call('a')] }]);
      const toolset = new FakeToolset(() => ({ kind: 'async', ms: 20 }));
      const approving = requireApproval(toolset);
      const result = await step({ ...base, provider, toolset: approving, onApproval: () => sleep(80).then(() => ({ type: 'approve' as const })), timeouts: { toolCallMs: 60 } });
      const [one] = await result.toolResults();
      expect(one!.returnValue).to.include({ isError: false, output: 'a:{}' });
    });

    it('a step cancelled while a call runs rejects with its own reason, not the budget', async () => {
      const provider = scriptedModel([{ parts: [call('a')] }]);
      const toolset = new FakeToolset(() => ({ kind: 'untilAborted' }));
      const result = await step({ ...base, provider, toolset, timeouts: { toolCallMs: 5_000 } });
      const reason = new Error('cancelled by the caller');
      await result.cancel(reason);
      expect(await rejection(result.toolResults())).to.equal(reason);
      expect(toolset.records[0]!.context.signal.reason).to.equal(reason);
    });
  });

  describe('a budget that does not fire changes nothing', () => {
    it('same message, results and events as without budgets; no timer left behind (fake clock)', async () => {
      const clock = sinon.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
      const run = async (timeouts: TimeoutBudgets | undefined) => {
        const toolset = new FakeToolset(() => ({ kind: 'sync' }));
        const { entry, events } = recordingHooks();
        // A signal in both runs: a step with budgets has one (the order of the events that do not block, tool results and
        // the step's end, may differ between a step with a signal and one without).
        const signal = new AbortController().signal;
        const provider = new MockChatProvider([textPart('hi'), call('a'), call('b')]);
        const result = await step({ ...base, provider, toolset, stepId: 'same', hooks: [entry], signal, ...(timeouts ? { timeouts } : {}) });
        const results = await result.toolResults();
        return { message: result.message, results, events: namesOf(events), ended: only<StepEndEvent>(events, 'onStepEnd').error, cleanup: only<CleanupEvent>(events, 'onCleanup') };
      };
      const without = await run(undefined);
      const within = await run({ stepMs: 60_000, idleMs: 60_000, toolCallMs: 60_000 });
      expect(within.message).to.deep.equal(without.message);
      expect(within.results).to.deep.equal(without.results);
      expect(within.events).to.deep.equal(without.events);
      expect(within.ended).to.equal(undefined);
      expect(within.cleanup).to.include({ cancelled: false });
      expect(clock.countTimers()).to.equal(0);
    });
  });

  describe('turnMs', () => {
    it('runs out across several steps: the running step is aborted, the turn rejects with the error; complete steps stay in the context', async () => {
      // Each step: a tool call, then 3 more parts 10 ms apart (~30 ms a step); 100 steps allowed.
      const provider = scriptedModel([{ parts: [call('t'), textPart('a'), textPart('b'), textPart('c')], gaps: [0, 10] }]);
      const toolset = new FakeToolset(() => ({ kind: 'sync' }));
      const agent = new Agent({ systemPrompt: 's', step: (options) => step({ ...options, provider, toolset }), timeouts: { turnMs: 150 } });
      const started = performance.now();
      const error = await rejection(agent.run('hi', { turn: { id: 'turn-7' } }));
      expectBudget(error, { budget: 'turn', limitMs: 150, turnId: 'turn-7', stepId: undefined });
      expect(error.message).to.equal('The turn turn-7 ran out of its time budget (turnMs: 150) and was aborted');
      expect(performance.now() - started).to.be.within(145, 1_000);
      expect(provider.calls).to.be.at.least(2);
      expect(provider.signals.at(-1)?.reason).to.equal(error);
      // The input, then two messages (assistant + tool) per complete step: nothing of the aborted one (the budget
      // ran out during a request, or, rarely, between two steps, before the next request).
      expect(agent.context.history.length).to.be.oneOf([1 + 2 * (provider.calls - 1), 1 + 2 * provider.calls]);
      expect(agent.context.history.at(-1)?.role).to.be.oneOf(['user', 'tool']);
    });

    it("a turn's own budgets are merged over the agent's, and its steps get the step budgets", async () => {
      const provider = scriptedModel([{ parts: [textPart('a'), textPart('b')], gaps: [0, 300] }]);
      const agent = new Agent({ systemPrompt: 's', step: (options) => step({ ...options, provider, toolset: emptyToolset }), timeouts: { turnMs: 10_000, stepMs: 10_000 } });
      const error = await rejection(agent.run('hi', { timeouts: { idleMs: 30 } }));
      expectBudget(error, { budget: 'idle', limitMs: 30 });
      const done = await agent.run('again', { timeouts: { idleMs: undefined } }); // undefined: unset, the agent's hold
      expect(done.stopReason).to.equal('no_tool_calls');
    });

    it('a retry wait is bounded by it', async () => {
      const { APIConnectionError } = await import('@kosong/core');
      const failing = new MockChatProvider([textPart('x')], { generateError: new APIConnectionError('down') });
      const agent = new Agent({
        systemPrompt: 's',
        step: (options) => step({ ...options, provider: failing, toolset: emptyToolset }),
        retry: { maxAttempts: 5, initialDelayMs: 10_000, maxDelayMs: 10_000 },
        random: () => 0.5,
        timeouts: { turnMs: 50 },
      });
      const started = performance.now();
      const error = await rejection(agent.run('hi'));
      expectBudget(error, { budget: 'turn', limitMs: 50 });
      expect(performance.now() - started).to.be.below(1_000);
    });

    it('each resume of a turn waiting for approval has a budget of its own; one that runs out leaves the step pending', async () => {
      let slowDeploy = false;
      const toolset = new FakeToolset((c) => (c.function.name === 'fake' && slowDeploy ? { kind: 'untilAborted' } : { kind: 'sync' }));
      const approving = requireApproval(toolset);
      const provider = scriptedModel([{ parts: [call('d1')] }, { parts: [textPart('done')] }]);
      const agent = new Agent({ systemPrompt: 's', step: (options) => step({ ...options, provider, toolset: approving }), timeouts: { turnMs: 60 } });
      const first = await agent.run('deploy');
      expect(first.stopReason).to.equal('approval_required');
      await sleep(80); // longer than a turn's budget: the resume's is its own
      slowDeploy = true;
      const error = await rejection(agent.resume({ decisions: { d1: { type: 'approve' } } }));
      expectBudget(error, { budget: 'turn', limitMs: 60 });
      expect(toolset.records.at(-1)!.context.signal.reason).to.equal(error);
      expect(agent.context.pendingStep?.message.toolCalls?.[0]?.id).to.equal('d1');
      slowDeploy = false;
      const resumed = await agent.resume({ decisions: { d1: { type: 'approve' } } });
      expect(resumed.stopReason).to.equal('no_tool_calls');
      expect(resumed.message.content).to.deep.equal([textPart('done')]);
    });
  });

  describe('through the kernel', () => {
    async function kernelWith(provider: ChatProvider, toolset: FakeToolset): Promise<Kernel> {
      const kernel = new Kernel({ cleanupTimeoutMs: 30 });
      await kernel.use(
        definePlugin({
          name: 'model',
          setup: (ctx) => {
            ctx.bindChatProvider('m', provider, { default: true });
            ctx.bindToolset(toolset);
          },
        }),
      );
      return kernel;
    }

    it('kernel.runner().step() carries the step budgets', async () => {
      const toolset = new FakeToolset(() => ({ kind: 'untilAborted' }));
      const kernel = await kernelWith(scriptedModel([{ parts: [call('a')] }]), toolset);
      kernel.tenants.define('acme', {});
      const result = await kernel.runner({ tenant: 'acme' }).step({ ...base, timeouts: { toolCallMs: 30 } });
      const [one] = await result.toolResults();
      expect(one!.returnValue.message).to.match(/^Tool `fake` timed out: .*toolCallMs: 30/);
      await kernel.dispose();
    });

    it('kernel.agent() carries the turn budget and the step budgets', async () => {
      const toolset = new FakeToolset(() => ({ kind: 'sync' }));
      const provider = scriptedModel([{ parts: [call('t'), textPart('a'), textPart('b')], gaps: [0, 15] }]);
      const kernel = await kernelWith(provider, toolset);
      const agent = kernel.agent({ systemPrompt: 's', timeouts: { turnMs: 80 } });
      const error = await rejection(agent.run('hi'));
      expectBudget(error, { budget: 'turn', limitMs: 80 });
      const stepBound = kernel.agent({ systemPrompt: 's', timeouts: { stepMs: 20 } });
      const stepError = await rejection(stepBound.run('hi'));
      expectBudget(stepError, { budget: 'step', limitMs: 20 });
      await kernel.dispose();
    });
  });
});
