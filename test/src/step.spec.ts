import {
  APIConnectionError,
  APIStatusError,
  emptyToolset,
  step,
  textPart,
  thinkPart,
  toolCall,
  toolCallPart,
  toolOk,
  type HookErrorReport,
  type Message,
  type StreamedMessagePart,
  type ToolCall,
  type ToolContext,
  type ToolResult,
  type Toolset,
} from '@kosong/core';
import { MockChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';
import { getEventListeners } from 'node:events';
import sinon from 'sinon';
import {
  FakeToolset,
  deepFreeze,
  deferred,
  namesOf,
  only,
  recordingHooks,
  sleep,
  type CleanupEvent,
  type StepEndEvent,
} from './support.js';

const history: readonly Message[] = deepFreeze([{ role: 'user', content: [textPart('go')] }]);
const call = (id: string, args = '{}'): ToolCall => toolCall(id, 'fake', args);
const base = { systemPrompt: 'You are a test.', history };

describe('step()', () => {
  let hookErrors: HookErrorReport[];
  const onHookError = (report: HookErrorReport): void => {
    hookErrors.push(report);
  };
  beforeEach(() => {
    hookErrors = [];
  });
  afterEach(() => sinon.restore());

  describe('a successful step', () => {
    it('merges the message, dispatches tool calls, and returns results (kosong test_step)', async () => {
      const parts = [textPart('Hello, '), textPart('world!'), toolCall('plus#123', 'fake', '{"a": 1, "b": 2}')];
      const seenParts: StreamedMessagePart[] = [];
      const seenResults: ToolResult[] = [];
      const toolset = new FakeToolset();
      const result = await step({
        ...base,
        provider: new MockChatProvider(parts),
        toolset,
        onMessagePart: (part) => {
          seenParts.push(part);
        },
        onToolResult: (r) => {
          seenResults.push(r);
        },
        onHookError,
      });
      expect(result.message).to.deep.equal({
        role: 'assistant',
        content: [textPart('Hello, world!')],
        toolCalls: [toolCall('plus#123', 'fake', '{"a": 1, "b": 2}')],
      });
      expect(result.toolCalls).to.deep.equal([toolCall('plus#123', 'fake', '{"a": 1, "b": 2}')]);
      expect(seenParts).to.deep.equal(parts);
      const results = await result.toolResults();
      expect(results).to.deep.equal([{ toolCallId: 'plus#123', returnValue: toolOk({ output: 'plus#123:{"a": 1, "b": 2}' }) }]);
      expect(seenResults).to.deep.equal(results);
      expect(hookErrors).to.deep.equal([]);
    });

    it('carries the stream id, usage, finish reason and trace id', async () => {
      const usage = { inputOther: 10, output: 2, inputCacheRead: 3, inputCacheCreation: 0 };
      const provider = new MockChatProvider([textPart('hi')], { id: 'msg-1', usage, finishReason: 'stop', traceId: 'trace-1' });
      const result = await step({ ...base, provider, toolset: emptyToolset });
      expect([result.id, result.usage, result.finishReason, result.traceId]).to.deep.equal(['msg-1', usage, 'stop', 'trace-1']);
      expect(result.stepId).to.be.a('string').and.not.equal('');
      expect(await result.toolResults()).to.deep.equal([]);
    });

    it('returns results in call order when tools finish in reverse order', async () => {
      const ids = ['a', 'b', 'c', 'd'];
      const delays: Record<string, number> = { a: 40, b: 30, c: 20, d: 10 };
      const toolset = new FakeToolset((c) => ({ kind: 'async', ms: delays[c.id]! }));
      const result = await step({ ...base, provider: new MockChatProvider(ids.map((id) => call(id))), toolset });
      const completion: string[] = [];
      for await (const r of result.toolResultsAsCompleted()) completion.push(r.toolCallId);
      expect(completion).to.deep.equal(['d', 'c', 'b', 'a']);
      expect((await result.toolResults()).map((r) => r.toolCallId)).to.deep.equal(ids);
    });

    it('gives results in completion order when calls settle in turn, then one out of turn', async () => {
      // a settles at once; b, c, d when the test says: b, then d before c.
      const gates = new Map(['b', 'c', 'd'].map((id) => [id, deferred()]));
      const toolset: Toolset = {
        tools: [],
        handle: async (c) => {
          await gates.get(c.id)?.promise;
          return { toolCallId: c.id, returnValue: toolOk({ output: c.id }) };
        },
      };
      const result = await step({ ...base, provider: new MockChatProvider(['a', 'b', 'c', 'd'].map((id) => call(id))), toolset });
      const completion: string[] = [];
      const reading = (async () => {
        for await (const r of result.toolResultsAsCompleted()) completion.push(r.toolCallId);
      })();
      for (const id of ['b', 'd', 'c']) {
        await sleep(1);
        gates.get(id)!.resolve();
      }
      await reading;
      expect(completion).to.deep.equal(['a', 'b', 'd', 'c']);
      // read again from the start: the same order; and the results in call order
      const again: string[] = [];
      for await (const r of result.toolResultsAsCompleted()) again.push(r.toolCallId);
      expect(again).to.deep.equal(['a', 'b', 'd', 'c']);
      expect((await result.toolResults()).map((r) => r.returnValue.output)).to.deep.equal(['a', 'b', 'c', 'd']);
    });

    it("hands each call a ToolContext whose signal survives a spread copy (an own, enumerable property), one signal per step", async () => {
      const seen: { keys: string[]; copy: ToolContext; context: ToolContext }[] = [];
      const toolset: Toolset = {
        tools: [],
        handle: (c, context) => {
          seen.push({ keys: Object.keys(context).sort(), copy: { ...context }, context });
          return { toolCallId: c.id, returnValue: toolOk({ output: 'ok' }) };
        },
      };
      const result = await step({ ...base, provider: new MockChatProvider([call('a'), call('b')]), toolset, context: { user: 'u1' }, stepId: 'step-7' });
      await result.toolResults();
      expect(seen.map((s) => s.keys)).to.deep.equal([
        ['context', 'idempotencyKey', 'index', 'signal', 'stepId', 'toolCall'],
        ['context', 'idempotencyKey', 'index', 'signal', 'stepId', 'toolCall'],
      ]);
      const [first, second] = seen as [(typeof seen)[0], (typeof seen)[0]];
      expect(first.copy.signal).to.be.instanceOf(AbortSignal).and.equal(first.context.signal).and.equal(second.context.signal);
      expect(first.copy).to.include({ stepId: 'step-7', index: 0, toolCall: first.context.toolCall });
      expect(second.copy).to.include({ stepId: 'step-7', index: 1, idempotencyKey: 'step-7/1' }); // a bare step: its id and the index
      expect(first.copy.context).to.deep.equal({ user: 'u1' });
      expect(first.copy.signal.aborted).to.equal(false);
    });

    it("removes its listener from the caller's signal when it ends: after success, after a failure", async () => {
      const controller = new AbortController();
      let listenersWhileStreaming = -1;
      const toolset: Toolset = {
        tools: [],
        handle: (c) => {
          listenersWhileStreaming = getEventListeners(controller.signal, 'abort').length;
          return { toolCallId: c.id, returnValue: toolOk({ output: 'ok' }) };
        },
      };
      const result = await step({ ...base, provider: new MockChatProvider([call('a'), textPart('done')]), toolset, signal: controller.signal });
      await result.toolResults();
      expect(listenersWhileStreaming).to.be.greaterThan(0);
      expect(getEventListeners(controller.signal, 'abort')).to.have.length(0);

      const error = new APIConnectionError('connection reset');
      const failing = new MockChatProvider([call('a'), textPart('more')], { errorAfter: { parts: 1, error } });
      expect(await step({ ...base, provider: failing, toolset, signal: controller.signal }).catch((e: unknown) => e)).to.equal(error);
      expect(getEventListeners(controller.signal, 'abort')).to.have.length(0);
      expect(controller.signal.aborted).to.equal(false);
    });

    it('keeps both results of calls with duplicate ids, aligned by index', async () => {
      const toolset = new FakeToolset((c) => ({ kind: 'async', ms: c.function.arguments === '{"n":1}' ? 20 : 1 }));
      const provider = new MockChatProvider([call('dup', '{"n":1}'), call('dup', '{"n":2}')]);
      const result = await step({ ...base, provider, toolset });
      const results = await result.toolResults();
      expect(results.map((r) => r.returnValue.output)).to.deep.equal(['dup:{"n":1}', 'dup:{"n":2}']);
      expect(results.map((r) => r.toolCallId)).to.deep.equal(['dup', 'dup']);
      expect(toolset.records).to.have.length(2);
    });

    it('dispatches a tool call while the model is still streaming', async () => {
      const parts = [call('early'), ...Array.from({ length: 5 }, (_, i) => textPart(`t${i}`))];
      let partsDelivered = 0;
      let partsWhenToolStarted = -1;
      const toolset: Toolset = {
        tools: [],
        handle: (c) => {
          partsWhenToolStarted = partsDelivered;
          return { toolCallId: c.id, returnValue: toolOk({ output: 'ok' }) };
        },
      };
      const result = await step({
        ...base,
        provider: new MockChatProvider(parts, { delayMs: 1 }),
        toolset,
        onMessagePart: () => {
          partsDelivered++;
        },
      });
      await result.toolResults();
      // The call is complete when the next part arrives (part 2 of 6), long before the stream ends.
      expect(partsWhenToolStarted).to.equal(2);
    });

    it('treats a returned value, a promise, a sync throw, a rejection and a bad return alike', async () => {
      const toolset: Toolset = {
        tools: [],
        handle: (c) => {
          switch (c.id) {
            case 'value':
              return { toolCallId: c.id, returnValue: toolOk({ output: 'v' }) };
            case 'promise':
              return Promise.resolve({ toolCallId: c.id, returnValue: toolOk({ output: 'p' }) });
            case 'throw':
              throw new Error('sync boom');
            case 'reject':
              return Promise.reject(new Error('async boom'));
            case 'wrong-id':
              return { toolCallId: 'other', returnValue: toolOk({ output: 'w' }) };
            default:
              return 'not a result' as unknown as ToolResult;
          }
        },
      };
      const ids = ['value', 'promise', 'throw', 'reject', 'wrong-id', 'bad'];
      const result = await step({ ...base, provider: new MockChatProvider(ids.map((id) => call(id))), toolset });
      const results = await result.toolResults();
      expect(results.map((r) => r.toolCallId)).to.deep.equal(ids);
      expect(results.map((r) => r.returnValue.isError)).to.deep.equal([false, false, true, true, false, true]);
      expect(results[2]!.returnValue.message).to.equal('Error running tool: sync boom');
      expect(results[3]!.returnValue.message).to.equal('Error running tool: async boom');
      expect(results[5]!.returnValue.message).to.equal('Invalid return type: string');
      expect(results[2]!.returnValue.display).to.deep.equal([{ type: 'brief', text: 'Tool runtime error' }]);
    });

    it('runs many parallel calls whose tools all listen to the abort signal without a listener warning', async () => {
      const warnings: Error[] = [];
      const onWarning = (warning: Error): void => void warnings.push(warning);
      process.on('warning', onWarning);
      try {
        const toolset = new FakeToolset(() => ({ kind: 'async', ms: 2 }));
        const result = await step({ ...base, provider: new MockChatProvider(Array.from({ length: 30 }, (_, i) => call(`c${i}`))), toolset });
        expect(await result.toolResults()).to.have.length(30);
        await sleep(0);
      } finally {
        process.off('warning', onWarning);
      }
      expect(warnings.map((w) => w.name)).to.not.include('MaxListenersExceededWarning');
    });

    it('tells onToolCall hooks about a call before the toolset runs it', async () => {
      const order: string[] = [];
      const toolset: Toolset = {
        tools: [],
        handle: (c) => {
          order.push(`handle ${c.id}`);
          return { toolCallId: c.id, returnValue: toolOk({ output: 'ok' }) };
        },
      };
      const result = await step({
        ...base,
        provider: new MockChatProvider([call('a'), call('b')]),
        toolset,
        hooks: [{ name: 'spans', hooks: { onToolCall: (e) => void order.push(`hook ${e.toolCallId}`) } }],
      });
      await result.toolResults();
      expect(order).to.deep.equal(['hook a', 'handle a', 'hook b', 'handle b']);
    });

    it('never mutates the history or the parts it was given', async () => {
      const parts = deepFreeze([textPart('a'), textPart('b'), call('x', null as unknown as string), toolCallPart('{}')]);
      const snapshot = structuredClone(parts);
      const result = await step({ ...base, provider: new MockChatProvider(parts), toolset: new FakeToolset() });
      await result.toolResults();
      expect(parts).to.deep.equal(snapshot);
      expect(history).to.deep.equal([{ role: 'user', content: [textPart('go')] }]);
    });

    it('hands observers frozen parts that later merging never changes', async () => {
      const parts = [textPart('a'), textPart('b'), thinkPart('x'), thinkPart('y', 'sig'), call('c1', '{'), toolCallPart('}')];
      const seen: StreamedMessagePart[] = [];
      const result = await step({
        ...base,
        provider: new MockChatProvider(parts),
        toolset: new FakeToolset(),
        onMessagePart: (part) => {
          seen.push(part);
        },
      });
      await result.toolResults();
      expect(seen).to.deep.equal([textPart('a'), textPart('b'), thinkPart('x'), thinkPart('y', 'sig'), call('c1', '{'), toolCallPart('}')]);
      for (const part of seen) expect(Object.isFrozen(part)).to.equal(true);
      expect(Object.isFrozen((seen[4] as ToolCall).function)).to.equal(true);
    });

    it('toolResults() is idempotent and cleans up once', async () => {
      const { entry, events } = recordingHooks();
      const result = await step({ ...base, provider: new MockChatProvider([call('a'), call('b')]), toolset: new FakeToolset(), hooks: [entry] });
      const first = result.toolResults();
      const second = result.toolResults();
      expect(second).to.equal(first);
      expect(await first).to.equal(await second);
      await result.toolResults();
      expect(namesOf(events).filter((n) => n === 'onCleanup')).to.have.length(1);
      expect(namesOf(events).at(-1)).to.equal('onCleanup');
    });

    it('delivers lifecycle events in order: start, parts, calls, end, results, cleanup last', async () => {
      const { entry, events } = recordingHooks();
      const toolset = new FakeToolset(() => ({ kind: 'async', ms: 10 }));
      const result = await step({ ...base, provider: new MockChatProvider([textPart('x'), call('a')]), toolset, hooks: [entry], tenant: 't1' });
      await result.toolResults();
      expect(namesOf(events)).to.deep.equal(['onStepStart', 'onPart', 'onPart', 'onToolCall', 'onStepEnd', 'onToolResult', 'onCleanup']);
      for (const [name, event] of events) {
        expect(event).to.include({ stepId: result.stepId, tenant: 't1', provider: 'mock', model: 'mock' });
        if (name === 'onPart') {
          // The per-part event is read-only through accessors (not frozen: see ReadOnlyPartEvent); its part is frozen.
          expect(() => ((event as { part: unknown }).part = textPart('forged')), name).to.throw(TypeError);
          expect(() => ((event as { stepId: unknown }).stepId = 'forged'), name).to.throw(TypeError);
          expect(Object.isFrozen((event as { part: object }).part)).to.equal(true);
        } else {
          expect(Object.isFrozen(event), name).to.equal(true);
        }
      }
      expect(only<StepEndEvent>(events, 'onStepEnd').error).to.equal(undefined);
      expect(only<CleanupEvent>(events, 'onCleanup')).to.include({ cancelled: false }).and.have.property('leaked').that.deep.equals([]);
    });
  });

  describe('every exit path reclaims the tools', () => {
    it('a provider failing mid-stream after two tools started: both saw abort and settled before the error arrives', async () => {
      const error = new APIConnectionError('connection reset');
      const toolset = new FakeToolset(() => ({ kind: 'settleAfterAbort', ms: 15 }));
      const { entry, events } = recordingHooks();
      const provider = new MockChatProvider([call('a'), call('b'), textPart('more')], { delayMs: 2, errorAfter: { parts: 3, error } });
      const caught = await step({ ...base, provider, toolset, hooks: [entry] }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(caught).to.equal(error);
      expect(toolset.records.map((r) => r.call.id)).to.deep.equal(['a', 'b']);
      for (const record of toolset.records) {
        expect(record.sawAbort, `${record.call.id} saw abort`).to.equal(true);
        expect(record.settledAt, `${record.call.id} settled`).to.be.a('number');
      }
      expect(toolset.running).to.equal(0);
      expect(only<StepEndEvent>(events, 'onStepEnd')).to.include({ error, aborted: false });
      expect(only<CleanupEvent>(events, 'onCleanup')).to.include({ cancelled: true });
      expect(namesOf(events).at(-1)).to.equal('onCleanup');
      expect(toolset.records[0]!.context.signal.reason).to.equal(error);
    });

    it('a provider failing before streaming: the error is re-thrown unchanged, start/end/cleanup still pair', async () => {
      const error = new APIStatusError(503, 'unavailable', { requestId: 'req-1' });
      const { entry, events } = recordingHooks();
      const caught = await step({ ...base, provider: new MockChatProvider([], { generateError: error }), toolset: emptyToolset, hooks: [entry] }).catch(
        (e: unknown) => e,
      );
      expect(caught).to.equal(error);
      expect(namesOf(events)).to.deep.equal(['onStepStart', 'onStepEnd', 'onCleanup']);
    });

    it('an abort during streaming aborts running tools and rejects with the reason after they settled', async () => {
      const controller = new AbortController();
      const toolset = new FakeToolset(() => ({ kind: 'settleAfterAbort', ms: 15 }));
      // A long stream (500 parts 2 ms apart), aborted once the tool runs: not at a fixed time, which a loaded machine may reach before the call is complete.
      const parts = [call('a'), ...Array.from({ length: 500 }, () => textPart('.'))];
      const reason = new Error('user pressed stop');
      const { entry, events } = recordingHooks();
      const pending = step({ ...base, provider: new MockChatProvider(parts, { delayMs: 2 }), toolset, signal: controller.signal, hooks: [entry] });
      while (toolset.running === 0) await sleep(1);
      controller.abort(reason);
      const caught = await pending.catch((e: unknown) => e);
      expect(caught).to.equal(reason);
      expect(toolset.records).to.have.length(1);
      expect(toolset.records[0]!.sawAbort).to.equal(true);
      expect(toolset.running).to.equal(0);
      expect(namesOf(events).at(-1)).to.equal('onCleanup');
      expect(only<StepEndEvent>(events, 'onStepEnd')).to.include({ error: reason, aborted: true });
    });

    it('an abort during tool execution makes toolResults() reject with the reason, tools reclaimed', async () => {
      const controller = new AbortController();
      const toolset = new FakeToolset((c) => (c.id === 'fast' ? { kind: 'sync' } : { kind: 'settleAfterAbort', ms: 15 }));
      const result = await step({ ...base, provider: new MockChatProvider([call('fast'), call('slow')]), toolset, signal: controller.signal });
      const results = result.toolResults();
      await sleep(5);
      controller.abort(new Error('stop'));
      const caught = await results.catch((e: unknown) => e);
      expect(caught).to.be.instanceOf(Error).with.property('message', 'stop');
      expect(toolset.records[1]!.sawAbort).to.equal(true);
      expect(toolset.running).to.equal(0);
      // idempotent on the failure path too
      expect(await result.toolResults().catch((e: unknown) => e)).to.equal(caught);
    });

    it('a signal aborted before the step starts rejects at once, without calling tools', async () => {
      const controller = new AbortController();
      controller.abort(new Error('too late'));
      const toolset = new FakeToolset();
      const caught = await step({ ...base, provider: new MockChatProvider([call('a')]), toolset, signal: controller.signal }).catch((e: unknown) => e);
      expect(caught).to.have.property('message', 'too late');
      expect(toolset.records).to.have.length(0);
    });

    it('a provider that ignores the abort signal still lets the step reject promptly', async () => {
      const controller = new AbortController();
      const parts = Array.from({ length: 100 }, () => textPart('.'));
      const started = performance.now();
      const pending = step({ ...base, provider: new MockChatProvider(parts, { delayMs: 20, onAbort: 'ignore' }), toolset: emptyToolset, signal: controller.signal });
      setTimeout(() => controller.abort(new Error('stop')), 10);
      const caught = await pending.catch((e: unknown) => e);
      expect(caught).to.have.property('message', 'stop');
      expect(performance.now() - started).to.be.below(500); // the whole stream would take 2 s
    });

    it('a tool that ignores its abort signal is reported as leaked after the deadline; the step does not hang', async () => {
      const error = new APIConnectionError('gone');
      const toolset = new FakeToolset(() => ({ kind: 'ignoreAbort', ms: 300 }));
      const { entry, events } = recordingHooks();
      const started = performance.now();
      const caught = await step({
        ...base,
        provider: new MockChatProvider([call('stubborn'), textPart('x')], { delayMs: 1, errorAfter: { parts: 2, error } }),
        toolset,
        hooks: [entry],
        cleanupTimeoutMs: 30,
      }).catch((e: unknown) => e);
      expect(caught).to.equal(error);
      expect(performance.now() - started).to.be.below(250);
      const cleanup = only<CleanupEvent>(events, 'onCleanup');
      expect(cleanup.leaked.map((c) => c.id)).to.deep.equal(['stubborn']);
      expect(cleanup.cancelled).to.equal(true);
      await sleep(300); // let the stubborn tool finish so it does not outlive the test
    });

    it('result.cancel() aborts running tools; toolResults() then rejects with the reason', async () => {
      const toolset = new FakeToolset(() => ({ kind: 'settleAfterAbort', ms: 15 }));
      const result = await step({ ...base, provider: new MockChatProvider([call('a')]), toolset });
      const reason = new Error('no longer needed');
      await result.cancel(reason);
      expect(toolset.records[0]!.sawAbort).to.equal(true);
      expect(toolset.running).to.equal(0);
      expect(await result.toolResults().catch((e: unknown) => e)).to.equal(reason);
    });

    it('a tool that reads its signal only after the step was cancelled gets it aborted, with the reason', async () => {
      const reason = new Error('no longer needed');
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let seen: AbortSignal | undefined;
      const toolset: Toolset = {
        tools: [],
        handle: async (c, context) => {
          await released;
          seen = context.signal;
          return { toolCallId: c.id, returnValue: toolOk({ output: 'late' }) };
        },
      };
      const result = await step({ ...base, provider: new MockChatProvider([call('a')]), toolset, cleanupTimeoutMs: 50 });
      const cancelled = result.cancel(reason);
      release();
      await cancelled;
      expect(seen?.aborted).to.equal(true);
      expect(seen?.reason).to.equal(reason);
    });

    it('makes no abort signal for tools that never read it, and one for all the calls of a step that do', async () => {
      const controllers = sinon.spy(globalThis, 'AbortController');
      const quiet: Toolset = { tools: [], handle: (c) => ({ toolCallId: c.id, returnValue: toolOk({ output: 'ok' }) }) };
      const first = await step({ ...base, provider: new MockChatProvider([call('a'), call('b'), call('c')]), toolset: quiet });
      expect(await first.toolResults()).to.have.length(3);
      expect(controllers.callCount).to.equal(0);
      const signals: AbortSignal[] = [];
      const reading: Toolset = {
        tools: [],
        handle: (c, context) => {
          signals.push(context.signal, context.signal);
          return { toolCallId: c.id, returnValue: toolOk({ output: 'ok' }) };
        },
      };
      const second = await step({ ...base, provider: new MockChatProvider([call('a'), call('b'), call('c')]), toolset: reading });
      expect(await second.toolResults()).to.have.length(3);
      expect(controllers.callCount).to.equal(1);
      expect(new Set(signals).size).to.equal(1);
      expect(signals[0]!.aborted).to.equal(false);
    });

    it('a stream part that is not a part fails the step with a ChatProviderError, tools reclaimed', async () => {
      const toolset = new FakeToolset(() => ({ kind: 'untilAborted' }));
      const parts = [call('a'), { type: 'bogus' } as unknown as StreamedMessagePart, textPart('x')];
      const caught = await step({ ...base, provider: new MockChatProvider(parts), toolset }).catch((e: unknown) => e);
      expect(caught).to.have.property('name', 'ChatProviderError');
      expect(String((caught as Error).message)).to.contain('unknown type');
      expect(toolset.records[0]!.sawAbort).to.equal(true);
    });
  });

  describe('unclean finish reasons and dispatch modes', () => {
    it('streaming mode, finish "length": the last call is not run, earlier calls are', async () => {
      const toolset = new FakeToolset();
      const provider = new MockChatProvider([call('whole', '{"a":1}'), call('cut', '{"a":')], { finishReason: 'length' });
      const result = await step({ ...base, provider, toolset });
      const results = await result.toolResults();
      expect(toolset.records.map((r) => r.call.id)).to.deep.equal(['whole']);
      expect(results[0]!.returnValue.isError).to.equal(false);
      expect(results[1]!.returnValue).to.include({ isError: true });
      expect(results[1]!.returnValue.message).to.contain('finish reason "length"');
    });

    it('streaming mode, finish "content_filter": the last call is not run', async () => {
      const toolset = new FakeToolset();
      const result = await step({ ...base, provider: new MockChatProvider([call('only')], { finishReason: 'content_filter' }), toolset });
      const [only1] = await result.toolResults();
      expect(toolset.records).to.have.length(0);
      expect(only1!.returnValue.message).to.contain('content_filter');
    });

    it('deferred mode: tools start only after the stream ended cleanly', async () => {
      let partsDelivered = 0;
      const startedAfter: number[] = [];
      const toolset: Toolset = {
        tools: [],
        handle: (c) => {
          startedAfter.push(partsDelivered);
          return { toolCallId: c.id, returnValue: toolOk({ output: 'ok' }) };
        },
      };
      const parts = [call('a'), textPart('x'), call('b'), textPart('y')];
      const result = await step({
        ...base,
        provider: new MockChatProvider(parts, { finishReason: 'tool_calls' }),
        toolset,
        dispatch: 'deferred',
        onMessagePart: () => {
          partsDelivered++;
        },
      });
      expect((await result.toolResults()).map((r) => r.toolCallId)).to.deep.equal(['a', 'b']);
      expect(startedAfter).to.deep.equal([4, 4]);
    });

    it('deferred mode, unclean finish: no call runs, each gets a "not executed" result', async () => {
      const toolset = new FakeToolset();
      const { entry, events } = recordingHooks();
      const result = await step({
        ...base,
        provider: new MockChatProvider([call('a'), call('b')], { finishReason: 'length' }),
        toolset,
        dispatch: 'deferred',
        hooks: [entry],
      });
      const results = await result.toolResults();
      expect(toolset.records).to.have.length(0);
      expect(results.map((r) => r.returnValue.isError)).to.deep.equal([true, true]);
      expect(results[0]!.returnValue.message).to.match(/^Tool call was not executed: /);
      const calls = events.filter(([n]) => n === 'onToolCall').map(([, e]) => (e as { executed: boolean }).executed);
      expect(calls).to.deep.equal([false, false]);
    });
  });

  describe('guarded callbacks', () => {
    for (const mode of ['throw', 'reject', 'hang'] as const) {
      const failing =
        (label: string) =>
        (): void | Promise<void> => {
          if (mode === 'throw') throw new Error(`${label} threw`);
          if (mode === 'reject') return Promise.reject(new Error(`${label} rejected`));
          return new Promise<void>(() => undefined);
        };

      it(`callbacks that ${mode} never change the outcome and are each reported`, async () => {
        const toolset = new FakeToolset();
        const parts = [textPart('a'), call('c1'), textPart('b')];
        const result = await step({
          ...base,
          provider: new MockChatProvider(parts),
          toolset,
          onMessagePart: failing('onMessagePart'),
          onToolCall: failing('onToolCall'),
          onToolResult: failing('onToolResult'),
          onHookError,
          hookTimeoutMs: 20,
        });
        expect(result.message.content).to.deep.equal([textPart('a'), textPart('b')]);
        const results = await result.toolResults();
        expect(results.map((r) => r.returnValue.isError)).to.deep.equal([false]);
        const kind = mode === 'throw' ? 'threw' : mode === 'reject' ? 'rejected' : 'timeout';
        const reported = hookErrors.map((r) => `${r.plugin}.${r.hook}:${r.kind}`).sort();
        expect(reported).to.deep.equal(
          ['options.onMessagePart', 'options.onMessagePart', 'options.onMessagePart', 'options.onToolCall', 'options.onToolResult'].map(
            (h) => `${h}:${kind}`,
          ),
        );
        expect(hookErrors.every((r) => r.stepId === result.stepId)).to.equal(true);
      });
    }

    it('a hook failing repeatedly is detached for the rest of the step and says so once', async () => {
      let calls = 0;
      const parts = Array.from({ length: 10 }, (_, i) => textPart(String(i)));
      const result = await step({
        ...base,
        provider: new MockChatProvider(parts),
        toolset: emptyToolset,
        hooks: [
          {
            name: 'flaky',
            hooks: {
              onPart: () => {
                calls++;
                throw new Error('nope');
              },
            },
          },
        ],
        onHookError,
      });
      expect(extractAll(result.message)).to.equal('0123456789');
      expect(calls).to.equal(3);
      expect(hookErrors.map((r) => r.detached)).to.deep.equal([false, false, true]);
    });

    it('a throwing hook-error handler falls back to stderr and does not escape', async () => {
      const write = sinon.stub(process.stderr, 'write').returns(true);
      const result = await step({
        ...base,
        provider: new MockChatProvider([textPart('x')]),
        toolset: emptyToolset,
        onMessagePart: () => {
          throw new Error('part boom');
        },
        onHookError: () => {
          throw new Error('sink boom');
        },
      });
      write.restore();
      expect(result.message.content).to.deep.equal([textPart('x')]);
      const lines = write.getCalls().map((c) => String(c.args[0]));
      expect(lines.some((l) => l.includes('part boom'))).to.equal(true);
      expect(lines.some((l) => l.includes('sink boom'))).to.equal(true);
    });

    it('by default writes one line per failure to stderr, naming the callback and the error', async () => {
      const write = sinon.stub(process.stderr, 'write').returns(true);
      await step({
        ...base,
        provider: new MockChatProvider([textPart('x')]),
        toolset: emptyToolset,
        onMessagePart: () => {
          throw new Error('kaput');
        },
      });
      write.restore();
      expect(write.callCount).to.equal(1);
      expect(String(write.firstCall.args[0])).to.match(/^\[kosong\] hook options\.onMessagePart threw in step [\w-]+: kaput\n$/);
    });

    it('an awaited onPart hook applies back-pressure: parts wait for it', async () => {
      const gate = deferred();
      const order: string[] = [];
      const pending = step({
        ...base,
        provider: new MockChatProvider([textPart('1'), textPart('2')]),
        toolset: emptyToolset,
        hooks: [
          {
            name: 'slow',
            hooks: {
              onPart: async (e) => {
                order.push(`start ${(e.part as { text: string }).text}`);
                if ((e.part as { text: string }).text === '1') await gate.promise;
                order.push(`end ${(e.part as { text: string }).text}`);
              },
            },
          },
        ],
      });
      await sleep(10);
      expect(order).to.deep.equal(['start 1']);
      gate.resolve();
      await pending;
      expect(order).to.deep.equal(['start 1', 'end 1', 'start 2', 'end 2']);
    });
  });
});

function extractAll(message: Message): string {
  return message.content.map((p) => (p.type === 'text' ? p.text : '')).join('');
}
