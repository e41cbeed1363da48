import { AsyncLocalStorage } from 'node:async_hooks';
import { readFileSync } from 'node:fs';
import {
  Kernel,
  definePlugin,
  step,
  textPart,
  toolCall,
  toolError,
  toolOk,
  type CleanupEvent,
  type StepEventContext,
  type ToolCall,
  type ToolResultEvent,
} from '@kosong/core';
import { MockChatProvider } from '@kosong/provider-echo';
import { DiagLogLevel, ROOT_CONTEXT, SpanStatusCode, context, diag, metrics, trace, type Context, type ContextManager } from '@opentelemetry/api';
import { expect } from 'chai';
import { errorTypeOf } from '../error-type.js';
import { otelPlugin } from '../otel-plugin.js';
import { OtelStepHooks } from '../otel-step-hooks.js';
import { INSTRUMENTATION_SCOPE_NAME, INSTRUMENTATION_SCOPE_VERSION } from '../scope.js';
import { Telemetry, callParts, history, idOf, isError, parentOf, sumOf, testToolset } from './support.js';

const ctx = (stepId: string, tenant?: string): StepEventContext => ({ stepId, tenant, provider: 'mock', model: 'm' });
const add = (id: string): ToolCall => toolCall(id, 'add', '{}');
const result = (stepId: string, index: number, call: ToolCall, isError = false, durationMs = 5): ToolResultEvent => ({
  ...ctx(stepId),
  toolCall: call,
  toolCallId: call.id,
  index,
  result: { toolCallId: call.id, returnValue: isError ? toolError({ message: 'no', brief: 'no' }) : toolOk({ output: 'yes' }) },
  durationMs,
});
const cleanup = (stepId: string, leaked: readonly ToolCall[] = [], cancelled = false): CleanupEvent => ({ ...ctx(stepId), leaked, cancelled });

/** A context manager on AsyncLocalStorage (what @opentelemetry/context-async-hooks provides). */
class AsyncLocalStorageContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(ctx: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    return this.storage.run(ctx, () => fn.call(thisArg, ...args));
  }
  bind<T>(_context: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.storage.disable();
    return this;
  }
}

describe('OtelStepHooks', () => {
  let telemetry: Telemetry;
  let hooks: OtelStepHooks;

  beforeEach(() => {
    telemetry = new Telemetry();
    hooks = new OtelStepHooks(telemetry.options());
  });

  afterEach(async () => {
    await telemetry.shutdown();
  });

  it('has no onPart hook (streaming costs nothing) and forgets every step at cleanup', async () => {
    expect('onPart' in hooks).to.equal(false);
    const provider = new MockChatProvider([textPart('a'), ...callParts('c1', 'add', '{}')]);
    const toolset = testToolset(() => ({ delayMs: 10 }));
    const run = await step({ provider, systemPrompt: '', toolset, history, hooks: [{ name: 'otel', hooks }] });
    expect(hooks.openSteps).to.equal(1); // the tool may still run: the span stays open until cleanup
    await run.toolResults();
    expect(hooks.openSteps).to.equal(0);
    expect(telemetry.spans()).to.have.length(2);
  });

  it('still ends the spans of a step whose onToolResult and onStepEnd never reached it (failed or detached)', () => {
    hooks.onStepStart({ ...ctx('s'), history, generation: {} });
    hooks.onToolCall({ ...ctx('s'), toolCall: add('a'), toolCallId: 'a', index: 0, executed: true });
    hooks.onToolCall({ ...ctx('s'), toolCall: add('b'), toolCallId: 'b', index: 1, executed: true });
    hooks.onCleanup(cleanup('s', [], true));

    const tools = telemetry.spans().filter((s) => s.name === 'execute_tool add');
    expect(tools.map((t) => t.attributes['error.type'])).to.deep.equal(['no_result', 'no_result']);
    expect(tools.every(isError)).to.equal(true);
    const chat = telemetry.span('chat m');
    expect(chat.status.code).to.equal(SpanStatusCode.UNSET); // the outcome never arrived: not guessed
    expect(chat.attributes['kosong.step.cancelled']).to.equal(true);
    expect(hooks.openSteps).to.equal(0);
  });

  it('gives a result whose call it missed a span back-dated by the call duration', () => {
    hooks.onStepStart({ ...ctx('s'), history, generation: {} });
    const before = Date.now();
    hooks.onToolResult(result('s', 0, add('a'), true, 250));
    hooks.onCleanup(cleanup('s'));

    const tool = telemetry.span('execute_tool add');
    const startedMs = tool.startTime[0] * 1000 + tool.startTime[1] / 1e6;
    expect(startedMs).to.be.within(before - 300, before - 200);
    expect(parentOf(tool)).to.equal(idOf(telemetry.span('chat m')));
    expect(tool.attributes['error.type']).to.equal('tool_error');
  });

  it('marks a leaked call as leaked and counts it as a tool error', async () => {
    hooks.onStepStart({ ...ctx('s'), history, generation: {} });
    const stuck = add('a');
    hooks.onToolCall({ ...ctx('s'), toolCall: stuck, toolCallId: 'a', index: 0, executed: true });
    hooks.onCleanup(cleanup('s', [stuck], true));

    expect(telemetry.span('execute_tool add').attributes['error.type']).to.equal('leaked');
    expect(telemetry.span('chat m').attributes['kosong.step.leaked_tool_calls']).to.equal(1);
    expect(sumOf((await telemetry.metrics()).get('kosong.tool.errors'), { 'error.type': 'leaked' })).to.equal(1);
  });

  it('ignores events of steps it never saw start, and cleans up only once', () => {
    hooks.onToolCall({ ...ctx('ghost'), toolCall: add('a'), toolCallId: 'a', index: 0, executed: true });
    hooks.onToolResult(result('ghost', 0, add('a')));
    hooks.onCleanup(cleanup('ghost'));
    hooks.onStepStart({ ...ctx('s'), history, generation: {} });
    hooks.onCleanup(cleanup('s'));
    hooks.onCleanup(cleanup('s'));
    expect(telemetry.spans().map((s) => s.name)).to.deep.equal(['chat m']);
  });

  it('shares the spans of two running steps with the same id, warns, and still ends every span', () => {
    const warnings: string[] = [];
    diag.setLogger({ warn: (m) => void warnings.push(m), error() {}, info() {}, debug() {}, verbose() {} }, DiagLogLevel.WARN);
    try {
      hooks.onStepStart({ ...ctx('dup', 'acme'), history, generation: {} });
      hooks.onStepStart({ ...ctx('dup', 'acme'), history, generation: {} });
      hooks.onToolCall({ ...ctx('dup'), toolCall: add('a'), toolCallId: 'a', index: 0, executed: true });
      hooks.onToolCall({ ...ctx('dup'), toolCall: add('a'), toolCallId: 'a', index: 0, executed: true });
      hooks.onCleanup(cleanup('dup'));
      expect(telemetry.spans().map((s) => s.name)).to.deep.equal(['execute_tool add']); // the displaced one
      hooks.onCleanup(cleanup('dup'));
    } finally {
      diag.disable();
    }
    expect(warnings.join('\n')).to.include('step id "dup" is already running');
    expect(telemetry.spans().map((s) => s.name)).to.deep.equal(['execute_tool add', 'execute_tool add', 'chat m']);
    expect(hooks.openSteps).to.equal(0);
  });

  it('ends every open span on endAll (the plugin calls it when the kernel is disposed)', () => {
    hooks.onStepStart({ ...ctx('a'), history, generation: {} });
    hooks.onStepStart({ ...ctx('b'), history, generation: {} });
    hooks.onToolCall({ ...ctx('b'), toolCall: add('x'), toolCallId: 'x', index: 0, executed: true });
    hooks.endAll();
    expect(telemetry.spans().map((s) => s.name).sort()).to.deep.equal(['chat m', 'chat m', 'execute_tool add']);
    expect(hooks.openSteps).to.equal(0);
  });

  it("parents the step span to the caller's active span", async () => {
    const manager = new AsyncLocalStorageContextManager();
    context.setGlobalContextManager(manager);
    try {
      const kernel = new Kernel();
      await kernel.use(
        definePlugin({ name: 'setup', setup: (c) => (c.bindChatProvider('mock', new MockChatProvider(callParts('c1', 'add', '{}'))), c.bindToolset(testToolset())) }),
        otelPlugin(telemetry.options()),
      );
      const tracer = telemetry.tracerProvider.getTracer('app');
      await tracer.startActiveSpan('invoke_agent', async (outer) => {
        await (await kernel.runner().step({ systemPrompt: '', history })).toolResults();
        outer.end();
      });
      await kernel.dispose();
    } finally {
      context.disable();
    }
    const outer = telemetry.span('invoke_agent');
    const chat = telemetry.span('chat mock');
    expect(parentOf(chat)).to.equal(idOf(outer));
    expect(parentOf(telemetry.span('execute_tool add'))).to.equal(idOf(chat));
  });

  it('uses the global tracer and meter providers by default', async () => {
    trace.setGlobalTracerProvider(telemetry.tracerProvider);
    metrics.setGlobalMeterProvider(telemetry.meterProvider);
    try {
      const kernel = new Kernel();
      await kernel.use(
        definePlugin({ name: 'setup', setup: (c) => (c.bindChatProvider('mock', new MockChatProvider([textPart('x')])), c.bindToolset(testToolset())) }),
        otelPlugin(),
      );
      await kernel.runner().step({ systemPrompt: '', history });
      await kernel.dispose();
    } finally {
      trace.disable();
      metrics.disable();
    }
    expect(telemetry.span('chat mock').instrumentationScope.name).to.equal(INSTRUMENTATION_SCOPE_NAME);
    expect((await telemetry.metrics()).has('gen_ai.client.operation.duration')).to.equal(true);
  });
});

describe('otelPlugin', () => {
  it('is named otel unless told otherwise', () => {
    expect(otelPlugin().name).to.equal('otel');
    expect(otelPlugin({ name: 'telemetry' }).name).to.equal('telemetry');
  });

  it("reports the package's version as its instrumentation scope version", () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { name: string; version: string };
    expect([INSTRUMENTATION_SCOPE_NAME, INSTRUMENTATION_SCOPE_VERSION]).to.deep.equal([pkg.name, pkg.version]);
  });
});

describe('errorTypeOf', () => {
  it("is the error's name, or _OTHER", () => {
    expect(errorTypeOf(new TypeError('x'))).to.equal('TypeError');
    expect(errorTypeOf(new DOMException('stop', 'AbortError'))).to.equal('AbortError');
    expect(errorTypeOf({ name: 'Custom' })).to.equal('Custom');
    expect(errorTypeOf('a string')).to.equal('_OTHER');
    expect(errorTypeOf(undefined)).to.equal('_OTHER');
    expect(errorTypeOf({ name: '' })).to.equal('_OTHER');
    expect(
      errorTypeOf({
        get name(): string {
          throw new Error('getter');
        },
      }),
    ).to.equal('_OTHER');
  });
});
