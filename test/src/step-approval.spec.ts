import {
  requireApproval,
  step,
  textPart,
  toolCall,
  type ApprovalDecision,
  type ApprovalDecisionEvent,
  type ApprovalRequest,
  type ApprovalRequestEvent,
  type HookErrorReport,
  type Message,
  type NamedStepHooks,
  type StepOptions,
  type ToolCall,
  type ToolResult,
  type Toolset,
} from '@kosong/core';
import { MockChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';
import { FakeToolset, deepFreeze, deferred, sleep, type CleanupEvent } from './support.js';

const history: readonly Message[] = deepFreeze([{ role: 'user', content: [textPart('go')] }]);
const call = (id: string, args = '{}'): ToolCall => toolCall(id, 'fake', args);
const base = { systemPrompt: 'You are a test.', history };

/** Hooks recording the approval events, tool calls, results and the cleanup, in order. */
function approvalRecorder(): { entry: NamedStepHooks; log: string[]; cleanup: () => CleanupEvent | undefined } {
  const log: string[] = [];
  let cleanup: CleanupEvent | undefined;
  return {
    log,
    cleanup: () => cleanup,
    entry: {
      name: 'recorder',
      hooks: {
        onToolCall: (e) => void log.push(`call ${e.toolCallId}`),
        onApprovalRequest: (e: ApprovalRequestEvent) => void log.push(`request ${e.toolCallId}#${e.index}`),
        onApprovalDecision: (e: ApprovalDecisionEvent) => void log.push(`decision ${e.toolCallId} ${e.decision.type}`),
        onToolResult: (e) => void log.push(`result ${e.toolCallId}${e.result.deferred ? ' deferred' : ''}`),
        onCleanup: (e) => {
          cleanup = e;
          log.push('cleanup');
        },
      },
    },
  };
}

describe('step() with approvals', () => {
  let hookErrors: HookErrorReport[];
  const onHookError = (report: HookErrorReport): void => void hookErrors.push(report);
  beforeEach(() => {
    hookErrors = [];
  });

  function run(parts: readonly ToolCall[], toolset: Toolset, extra: Partial<StepOptions> = {}) {
    return step({ ...base, provider: new MockChatProvider(parts), toolset, onHookError, ...extra });
  }

  it('runs an approved call, and observers hear of the request and the decision before the result', async () => {
    const inner = new FakeToolset();
    const { entry, log } = approvalRecorder();
    const requests: ApprovalRequest[] = [];
    const result = await run([call('a')], requireApproval(inner), {
      hooks: [entry],
      tenant: 't1',
      onApproval: (request) => {
        requests.push(request);
        return { type: 'approve' };
      },
    });
    const [only] = await result.toolResults();
    expect(only!.returnValue.isError).to.equal(false);
    expect(only!.returnValue.output).to.equal('a:{}');
    expect(inner.records).to.have.length(1);
    expect(requests).to.have.length(1);
    expect(requests[0]!).to.include({ index: 0, stepId: result.stepId, tenant: 't1' });
    expect(requests[0]!.toolCall.id).to.equal('a');
    expect(log).to.deep.equal(['call a', 'request a#0', 'decision a approve', 'result a', 'cleanup']);
    expect(hookErrors).to.deep.equal([]);
  });

  it('does not ask about calls that need no approval, nor about toolsets without needsApproval', async () => {
    const asked: string[] = [];
    const onApproval = (r: ApprovalRequest): ApprovalDecision => (asked.push(r.toolCall.id), { type: 'approve' });
    const selective = requireApproval(new FakeToolset(), (c) => c.id === 'b');
    const results = await (await run([call('a'), call('b'), call('c')], selective, { onApproval })).toolResults();
    expect(results.map((r) => r.returnValue.isError)).to.deep.equal([false, false, false]);
    expect(asked).to.deep.equal(['b']);
    asked.length = 0;
    await (await run([call('a')], new FakeToolset(), { onApproval })).toolResults();
    expect(asked).to.deep.equal([]);
  });

  it('gives a denied call an error result with the reason, and never runs it', async () => {
    const inner = new FakeToolset();
    const results = await (
      await run([call('a'), call('b')], requireApproval(inner), {
        onApproval: ({ toolCall: c }) => (c.id === 'a' ? { type: 'deny', reason: 'not on a Friday' } : { type: 'deny' }),
      })
    ).toolResults();
    expect(inner.records).to.have.length(0);
    expect(results[0]!.returnValue).to.include({ isError: true, message: 'The tool call was denied: not on a Friday' });
    expect(results[1]!.returnValue.isError).to.equal(true);
    expect(results[1]!.returnValue.message).to.match(/denied by the user/);
    expect(results.every((r) => r.deferred === undefined)).to.equal(true);
  });

  it('marks a deferred call (or one with no handler at all) and does not run it', async () => {
    const inner = new FakeToolset();
    const { entry, log } = approvalRecorder();
    const withHandler = await (await run([call('a'), call('b')], requireApproval(inner, (c) => c.id === 'a'), { hooks: [entry], onApproval: () => ({ type: 'defer' }) })).toolResults();
    expect(withHandler[0]).to.deep.include({ toolCallId: 'a', deferred: true });
    expect(withHandler[0]!.returnValue.message).to.match(/waiting for approval/);
    expect(withHandler[1]!.deferred).to.equal(undefined);
    expect(inner.records.map((r) => r.call.id)).to.deep.equal(['b']);
    expect(log).to.include.members(['request a#0', 'decision a defer', 'result a deferred']);

    const none = await (await run([call('x')], requireApproval(new FakeToolset()))).toolResults();
    expect(none[0]!.deferred).to.equal(true);
  });

  it('keeps call order when a decision comes late and other calls finish first', async () => {
    const decision = deferred<ApprovalDecision>();
    const inner = new FakeToolset();
    const result = await run([call('a'), call('b'), call('c')], requireApproval(inner, (c) => c.id === 'a'), { onApproval: () => decision.promise });
    const completed: string[] = [];
    const collecting = (async () => {
      for await (const r of result.toolResultsAsCompleted()) completed.push(r.toolCallId);
    })();
    await sleep(20);
    expect(completed).to.deep.equal(['b', 'c']);
    decision.resolve({ type: 'approve' });
    const results = await result.toolResults();
    await collecting;
    expect(results.map((r) => r.toolCallId)).to.deep.equal(['a', 'b', 'c']);
    expect(completed).to.deep.equal(['b', 'c', 'a']);
  });

  it('aborting while a call waits ends the wait at once, aborts the handler, runs nothing and leaks nothing', async () => {
    const controller = new AbortController();
    const inner = new FakeToolset();
    let handlerSignal: AbortSignal | undefined;
    const { entry, log, cleanup } = approvalRecorder();
    // A handler that never decides and ignores its signal.
    const result = await run([call('a'), call('b')], requireApproval(inner), {
      signal: controller.signal,
      hooks: [entry],
      cleanupTimeoutMs: 200,
      onApproval: (request) => {
        handlerSignal = request.signal;
        return new Promise<ApprovalDecision>(() => undefined);
      },
    });
    await sleep(5);
    const reason = new Error('user pressed Ctrl-C');
    controller.abort(reason);
    const error = await result.toolResults().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).to.equal(reason);
    expect(handlerSignal?.aborted).to.equal(true);
    expect(inner.records).to.have.length(0);
    expect(cleanup()).to.include({ cancelled: true });
    expect(cleanup()!.leaked).to.deep.equal([]);
    expect(log.filter((l) => l.startsWith('decision'))).to.deep.equal([]);
    expect(log.at(-1)).to.equal('cleanup');
    expect(hookErrors).to.deep.equal([]);
  });

  it('a provider error while a call waits reclaims the wait before the step rejects', async () => {
    const error = new Error('stream broke');
    let handlerSignal: AbortSignal | undefined;
    const { entry, log } = approvalRecorder();
    const failing = step({
      ...base,
      provider: new MockChatProvider([call('a'), textPart('more'), textPart('and more')], { delayMs: 2, errorAfter: { parts: 2, error } }),
      toolset: requireApproval(new FakeToolset()),
      hooks: [entry],
      onHookError,
      onApproval: (request) => {
        handlerSignal = request.signal;
        return new Promise<ApprovalDecision>(() => undefined);
      },
    });
    expect(await failing.catch((e: unknown) => e)).to.equal(error);
    expect(handlerSignal?.aborted).to.equal(true);
    expect(log.at(-1)).to.equal('cleanup');
  });

  it('denies a call whose decision does not come within approvalTimeoutMs, and reports the timeout', async () => {
    const inner = new FakeToolset();
    let handlerSignal: AbortSignal | undefined;
    const results = await (
      await run([call('a')], requireApproval(inner), {
        approvalTimeoutMs: 30,
        onApproval: (request) => {
          handlerSignal = request.signal;
          return new Promise<ApprovalDecision>((resolve) => setTimeout(() => resolve({ type: 'approve' }), 200));
        },
      })
    ).toolResults();
    expect(results[0]!.returnValue.isError).to.equal(true);
    expect(results[0]!.returnValue.message).to.match(/nobody decided about it within 30 ms/);
    expect(handlerSignal?.aborted).to.equal(true);
    expect(inner.records).to.have.length(0);
    expect(hookErrors.map((r) => [r.plugin, r.hook, r.kind])).to.deep.equal([['options', 'onApproval', 'timeout']]);
    await sleep(220); // the late approval changes nothing
    expect(inner.records).to.have.length(0);
  });

  for (const [label, onApproval, kind] of [
    ['throws', () => {
      throw new Error('handler bug');
    }, 'threw'],
    ['rejects', () => Promise.reject(new Error('handler bug')), 'rejected'],
    ['returns no decision', () => 'yes' as unknown as ApprovalDecision, 'threw'],
    ['resolves with no decision', () => Promise.resolve({ type: 'maybe' } as unknown as ApprovalDecision), 'rejected'],
  ] as const) {
    it(`reports a handler that ${label}, and denies the call`, async () => {
      const inner = new FakeToolset();
      const results = await (await run([call('a')], requireApproval(inner), { onApproval })).toolResults();
      expect(results[0]!.returnValue.isError).to.equal(true);
      expect(results[0]!.returnValue.message).to.match(/approval handler failed/);
      expect(results[0]!.returnValue.message).not.to.match(/handler bug/); // the handler's error is not the model's business
      expect(inner.records).to.have.length(0);
      expect(hookErrors).to.have.length(1);
      expect(hookErrors[0]).to.include({ plugin: 'options', hook: 'onApproval', kind });
    });
  }

  it('reports a rejection that comes after the timeout, without an unhandled rejection', async () => {
    const results = await (
      await run([call('a')], requireApproval(new FakeToolset()), {
        approvalTimeoutMs: 10,
        onApproval: () => new Promise<ApprovalDecision>((_, reject) => setTimeout(() => reject(new Error('late failure')), 40)),
      })
    ).toolResults();
    expect(results[0]!.returnValue.isError).to.equal(true);
    await sleep(60);
    expect(hookErrors.map((r) => r.kind)).to.deep.equal(['timeout', 'rejected']);
  });

  it('gives the model an error result when needsApproval throws, without asking or running', async () => {
    const inner = new FakeToolset();
    let asked = 0;
    const toolset = requireApproval(inner, () => {
      throw new Error('policy crashed');
    });
    const results = await (await run([call('a')], toolset, { onApproval: () => (asked++, { type: 'approve' }) })).toolResults();
    expect(results[0]!.returnValue).to.include({ isError: true, message: 'Error running tool: the approval check failed: policy crashed' });
    expect(asked).to.equal(0);
    expect(inner.records).to.have.length(0);
  });

  it('requireApproval: a list of names, a function, and the toolset\'s own needsApproval all count', async () => {
    const inner = new FakeToolset();
    const own: Toolset = { tools: inner.tools, handle: (c, ctx) => inner.handle(c, ctx), needsApproval: (c) => c.id === 'own' };
    const byName = requireApproval(own, ['other']);
    const ctx = { signal: new AbortController().signal, stepId: 's', index: 0 };
    expect(await byName.needsApproval!(call('x'), { ...ctx, toolCall: call('x') })).to.equal(false);
    expect(await byName.needsApproval!(call('own'), { ...ctx, toolCall: call('own') })).to.equal(true);
    expect(await byName.needsApproval!(toolCall('y', 'other', '{}'), { ...ctx, toolCall: toolCall('y', 'other', '{}') })).to.equal(true);
    const never = requireApproval(own, false);
    expect(await never.needsApproval!(call('own'), { ...ctx, toolCall: call('own') })).to.equal(true);
    expect(await never.needsApproval!(call('x'), { ...ctx, toolCall: call('x') })).to.equal(false);
    expect(byName.tools).to.equal(inner.tools);
    expect(() => requireApproval(own, 'yes' as unknown as boolean)).to.throw(TypeError);
  });

  describe('resume', () => {
    const message: Message = deepFreeze({ role: 'assistant', content: [textPart('Running three.')], toolCalls: [call('a'), call('b'), call('c')] });
    const earlier: ToolResult = deepFreeze({ toolCallId: 'b', returnValue: { isError: false, output: 'b ran before', message: '', display: [] } });

    it('completes the step without calling the provider: earlier results kept, approved calls run, denied ones not', async () => {
      const provider = new MockChatProvider([textPart('never')]);
      const inner = new FakeToolset();
      const { entry, log } = approvalRecorder();
      const result = await step({
        ...base,
        provider,
        toolset: inner, // no needsApproval at all: the waiting calls are known to need it
        hooks: [entry],
        onHookError,
        resume: { message, results: [undefined, earlier, undefined], decisions: [{ type: 'approve' }, undefined, { type: 'deny', reason: 'no' }], messageId: 'm1', finishReason: 'tool_calls' },
      });
      expect(provider.requests).to.have.length(0);
      expect(result.message).to.equal(message);
      expect(result).to.include({ id: 'm1', finishReason: 'tool_calls', usage: undefined });
      const results = await result.toolResults();
      expect(results.map((r) => r.toolCallId)).to.deep.equal(['a', 'b', 'c']);
      expect(results[0]!.returnValue.output).to.equal('a:{}');
      expect(results[1]!.returnValue.output).to.equal('b ran before');
      expect(results[2]!.returnValue.message).to.equal('The tool call was denied: no');
      expect(inner.records.map((r) => r.call.id)).to.deep.equal(['a']);
      expect(log).to.deep.equal(['call a', 'decision a approve', 'call c', 'decision c deny', 'result c', 'result a', 'cleanup']);
    });

    it('asks the handler about a waiting call without a decision, which may defer it again', async () => {
      const asked: string[] = [];
      const result = await step({
        ...base,
        provider: new MockChatProvider([]),
        toolset: new FakeToolset(),
        onHookError,
        onApproval: (r) => (asked.push(r.toolCall.id), { type: 'defer' }),
        resume: { message, results: [undefined, earlier, { toolCallId: 'c', returnValue: earlier.returnValue, deferred: true }] },
      });
      const results = await result.toolResults();
      expect(asked).to.deep.equal(['a', 'c']);
      expect(results.map((r) => r.deferred)).to.deep.equal([true, undefined, true]);
    });

    it('refuses results that are not aligned with the calls, after the usual start and end events', async () => {
      const { entry, log } = approvalRecorder();
      const error = await step({ ...base, provider: new MockChatProvider([]), toolset: new FakeToolset(), hooks: [entry], resume: { message, results: [undefined] } }).catch(
        (e: unknown) => e,
      );
      expect(error).to.be.instanceOf(TypeError);
      expect(log).to.deep.equal(['cleanup']);
      const bad = await step({
        ...base,
        provider: new MockChatProvider([]),
        toolset: new FakeToolset(),
        resume: { message, results: [undefined, undefined, undefined], decisions: [{ type: 'ok' } as unknown as ApprovalDecision, undefined, undefined] },
      }).catch((e: unknown) => e);
      expect(bad).to.be.instanceOf(TypeError);
    });
  });
});
