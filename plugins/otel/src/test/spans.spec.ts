import { APIConnectionError, APIStatusError, definePlugin, textPart, tokenUsage, type StepHooks } from '@kosong/core';
import { MockChatProvider } from '@kosong/provider-echo';
import { SpanKind, SpanStatusCode, type Attributes, type TracerProvider } from '@opentelemetry/api';
import { BasicTracerProvider, SamplingDecision, type Sampler } from '@opentelemetry/sdk-trace-base';
import { expect } from 'chai';
import { GEN_AI_CONVENTIONS_VERSION, GEN_AI_SCHEMA_URL } from '../conventions.js';
import { INSTRUMENTATION_SCOPE_NAME } from '../scope.js';
import { Telemetry, callParts, history, idOf, isError, kernelWith, parentOf, rejectionOf, testToolset } from './support.js';

describe('otelPlugin spans', () => {
  let telemetry: Telemetry;

  beforeEach(() => {
    telemetry = new Telemetry();
  });

  afterEach(async () => {
    await telemetry.shutdown();
  });

  it('traces a successful step with tools: a chat span (CLIENT) and an execute_tool span (INTERNAL) per call, its children', async () => {
    const provider = new MockChatProvider(
      [textPart('Let me add. '), ...callParts('call-1', 'add', '{"a":1,"b":2}'), textPart('And again. '), ...callParts('call-2', 'add', '{"a":3,"b":4}')],
      { id: 'msg-42', modelName: 'kimi-k2', finishReason: 'tool_calls', usage: tokenUsage({ inputOther: 10, inputCacheRead: 30, inputCacheCreation: 2, output: 7 }) },
    );
    const { kernel, reports } = await kernelWith(telemetry, provider, testToolset());

    const result = await kernel.runner().step({ systemPrompt: 'You add.', history, stepId: 'step-1' });
    const results = await result.toolResults();
    await kernel.dispose();

    expect(results).to.have.length(2);
    expect(reports).to.deep.equal([]);
    const spans = telemetry.spans();
    expect(spans.map((s) => s.name)).to.have.members(['chat kimi-k2', 'execute_tool add', 'execute_tool add']);
    const chat = telemetry.span('chat kimi-k2');
    expect(chat.kind).to.equal(SpanKind.CLIENT);
    expect(parentOf(chat)).to.equal(undefined);
    expect(chat.status.code).to.equal(SpanStatusCode.UNSET);
    expect(chat.attributes).to.deep.equal({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'mock',
      'gen_ai.request.model': 'kimi-k2',
      'kosong.step.id': 'step-1',
      'gen_ai.response.id': 'msg-42',
      'gen_ai.response.finish_reasons': ['tool_call'],
      'gen_ai.usage.input_tokens': 42, // cached included
      'gen_ai.usage.output_tokens': 7,
      'gen_ai.usage.cache_read.input_tokens': 30,
      'gen_ai.usage.cache_creation.input_tokens': 2,
    });
    expect(chat.instrumentationScope).to.deep.include({ name: INSTRUMENTATION_SCOPE_NAME, schemaUrl: GEN_AI_SCHEMA_URL });
    expect(GEN_AI_SCHEMA_URL).to.equal(`https://opentelemetry.io/schemas/${GEN_AI_CONVENTIONS_VERSION}`);

    const tools = spans.filter((s) => s.name === 'execute_tool add');
    tools.sort((a, b) => (a.attributes['kosong.tool.call.index'] as number) - (b.attributes['kosong.tool.call.index'] as number));
    tools.forEach((tool, index) => {
      expect(tool.kind).to.equal(SpanKind.INTERNAL);
      expect(parentOf(tool)).to.equal(idOf(chat));
      expect(tool.spanContext().traceId).to.equal(chat.spanContext().traceId);
      expect(tool.status.code).to.equal(SpanStatusCode.UNSET);
      expect(tool.attributes).to.deep.equal({
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'add',
        'gen_ai.tool.call.id': `call-${index + 1}`,
        'gen_ai.tool.type': 'function',
        'kosong.tool.call.index': index,
      });
    });
    // The step span ends at cleanup, after its tools: the tool spans lie inside it.
    expect(spans.at(-1)).to.equal(chat);
  });

  it('sets the operation, provider and model when the span starts (samplers read them)', async () => {
    const sampled: { name: string; kind: SpanKind; attributes: Attributes }[] = [];
    const sampler: Sampler = {
      shouldSample(_context, _traceId, name, kind, attributes) {
        sampled.push({ name, kind, attributes: { ...attributes } });
        return { decision: SamplingDecision.RECORD_AND_SAMPLED };
      },
      toString: () => 'recording sampler',
    };
    const tracerProvider = new BasicTracerProvider({ sampler });
    const provider = new MockChatProvider([textPart('hi '), ...callParts('c1', 'add', '{}')], { modelName: 'm1' });
    const { kernel } = await kernelWith(telemetry, provider, testToolset(), { otel: { tracerProvider } });

    await (await kernel.runner({}).step({ systemPrompt: '', history, stepId: 's1' })).toolResults();
    await kernel.dispose();
    await tracerProvider.shutdown();

    expect(sampled).to.deep.equal([
      {
        name: 'chat m1',
        kind: SpanKind.CLIENT,
        attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'mock', 'gen_ai.request.model': 'm1', 'kosong.step.id': 's1' },
      },
      {
        name: 'execute_tool add',
        kind: SpanKind.INTERNAL,
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': 'add',
          'gen_ai.tool.call.id': 'c1',
          'gen_ai.tool.type': 'function',
          'kosong.tool.call.index': 0,
        },
      },
    ]);
  });

  it('marks a tool span as an error when the tool returns an error result or throws; the step span stays OK', async () => {
    const provider = new MockChatProvider([...callParts('c1', 'fail', '{}'), ...callParts('c2', 'fail', '{}'), ...callParts('c3', 'add', '{}')]);
    const toolset = testToolset((call) => (call.id === 'c1' ? 'error' : call.id === 'c2' ? 'throw' : 'ok'));
    const { kernel } = await kernelWith(telemetry, provider, toolset);

    const result = await kernel.runner().step({ systemPrompt: '', history });
    await result.toolResults();
    await kernel.dispose();

    const byId = new Map(telemetry.spans().map((s) => [s.attributes['gen_ai.tool.call.id'], s]));
    for (const id of ['c1', 'c2']) {
      const tool = byId.get(id)!;
      expect(tool.status).to.deep.equal({ code: SpanStatusCode.ERROR }); // no message: it is content
      expect(tool.attributes['error.type']).to.equal('tool_error');
    }
    expect(byId.get('c3')!.status.code).to.equal(SpanStatusCode.UNSET);
    expect(byId.get('c3')!.attributes).not.to.have.property('error.type');
    const chat = telemetry.span('chat mock');
    expect(chat.status.code).to.equal(SpanStatusCode.UNSET);
    expect(chat.attributes).not.to.have.property('error.type');
  });

  it('marks the step span as an error with error.type when the provider fails mid-stream; every span ends', async () => {
    const failure = new APIStatusError(503, 'the model is overloaded', { requestId: 'req-1' });
    // The stream breaks after the first call is complete: that call was dispatched and must be reclaimed.
    const provider = new MockChatProvider([...callParts('c1', 'add', '{}'), textPart('more '), textPart('never')], { errorAfter: { parts: 3, error: failure } });
    const { kernel } = await kernelWith(telemetry, provider, testToolset(() => 'untilAborted'));

    const error = await rejectionOf(kernel.runner().step({ systemPrompt: '', history }));
    await kernel.dispose();

    expect(error).to.equal(failure);
    const chat = telemetry.span('chat mock');
    expect(chat.status).to.deep.equal({ code: SpanStatusCode.ERROR, message: 'the model is overloaded' });
    expect(chat.attributes).to.include({ 'error.type': 'APIStatusError', 'http.response.status_code': 503, 'kosong.step.cancelled': true });
    expect(chat.attributes).not.to.have.property('gen_ai.response.id');
    const exception = chat.events.find((e) => e.name === 'exception');
    expect(exception?.attributes).to.include({ 'exception.type': 'APIStatusError', 'exception.message': 'the model is overloaded' });
    const tool = telemetry.span('execute_tool add');
    expect(tool.ended).to.equal(true);
    expect(parentOf(tool)).to.equal(idOf(chat));
  });

  it('traces a request that fails before any stream: the step span alone, as an error', async () => {
    const provider = new MockChatProvider([], { generateError: new APIConnectionError('connection refused') });
    const { kernel } = await kernelWith(telemetry, provider, testToolset());

    await rejectionOf(kernel.runner().step({ systemPrompt: '', history }));
    await kernel.dispose();

    expect(telemetry.spans()).to.have.length(1);
    const chat = telemetry.span('chat mock');
    expect(isError(chat)).to.equal(true);
    expect(chat.attributes['error.type']).to.equal('APIConnectionError');
    expect(chat.attributes).not.to.have.property('kosong.step.cancelled');
  });

  it('marks an aborted step as an error (AbortError) and ends the spans of its tools, leaked ones as errors', async () => {
    const controller = new AbortController();
    const trailing = Array.from({ length: 10 }, () => textPart('never streamed '));
    const provider = new MockChatProvider([...callParts('c1', 'add', '{}'), ...callParts('c2', 'add', '{}'), ...trailing], { delayMs: 2 });
    const toolset = testToolset((call) => {
      if (call.id === 'c2') setTimeout(() => controller.abort(), 0); // abort once both calls run
      return call.id === 'c1' ? 'untilAborted' : 'ignoreAbort';
    });
    const { kernel } = await kernelWith(telemetry, provider, toolset, { cleanupTimeoutMs: 20 });

    const error = await rejectionOf(kernel.runner().step({ systemPrompt: '', history, signal: controller.signal }));
    await kernel.dispose();

    expect((error as Error).name).to.equal('AbortError');
    const chat = telemetry.span('chat mock');
    expect(isError(chat)).to.equal(true);
    expect(chat.attributes).to.include({ 'error.type': 'AbortError', 'kosong.step.cancelled': true, 'kosong.step.leaked_tool_calls': 1 });
    const byId = new Map(telemetry.spans().map((s) => [s.attributes['gen_ai.tool.call.id'], s]));
    // c1 honoured its signal and returned a result; c2 ignored it past the cleanup deadline.
    expect(byId.get('c1')!.status.code).to.equal(SpanStatusCode.UNSET);
    expect(byId.get('c2')!.status.code).to.equal(SpanStatusCode.ERROR);
    expect(byId.get('c2')!.attributes['error.type']).to.equal('leaked');
    for (const span of telemetry.spans()) expect(span.ended).to.equal(true);
    expect(telemetry.spans()).to.have.length(3);
  });

  it('gives a call the runtime did not run a tool span marked not_executed', async () => {
    // Finish reason `length`: the last call, completed only by the end of the stream, is withheld.
    const provider = new MockChatProvider(callParts('c1', 'add', '{"a":'), { finishReason: 'length' });
    const { kernel } = await kernelWith(telemetry, provider, testToolset());

    const result = await kernel.runner().step({ systemPrompt: '', history });
    await result.toolResults();
    await kernel.dispose();

    const tool = telemetry.span('execute_tool add');
    expect(tool.attributes).to.include({ 'kosong.tool.call.executed': false, 'error.type': 'not_executed' });
    expect(isError(tool)).to.equal(true);
    expect(telemetry.span('chat mock').attributes['gen_ai.response.finish_reasons']).to.deep.equal(['length']);
  });

  it('leaves the chat span OK but marks it cancelled when the tools are cancelled after the message was complete', async () => {
    const provider = new MockChatProvider(callParts('c1', 'add', '{}'));
    const { kernel } = await kernelWith(telemetry, provider, testToolset(() => 'untilAborted'));

    const result = await kernel.runner().step({ systemPrompt: '', history });
    await result.cancel(new Error('user left'));
    await rejectionOf(result.toolResults());
    await kernel.dispose();

    const chat = telemetry.span('chat mock');
    expect(chat.status.code).to.equal(SpanStatusCode.UNSET);
    expect(chat.attributes['kosong.step.cancelled']).to.equal(true);
    expect(telemetry.span('execute_tool add').ended).to.equal(true);
  });

  it('still ends the step span when its own tool hooks fail (a tracer throwing for tool spans) and get detached', async () => {
    const real = telemetry.tracerProvider.getTracer('x');
    const tracerProvider: TracerProvider = {
      getTracer: (...args) => {
        const tracer = telemetry.tracerProvider.getTracer(...args);
        return {
          startSpan: (name, options, context) => {
            if (name.startsWith('execute_tool')) throw new Error('tracer broke');
            return tracer.startSpan(name, options, context);
          },
          startActiveSpan: real.startActiveSpan.bind(real),
        };
      },
    };
    const calls = Array.from({ length: 5 }, (_, i) => callParts(`c${i}`, 'add', '{}')).flat();
    const { kernel, reports } = await kernelWith(telemetry, new MockChatProvider(calls), testToolset(), { otel: { tracerProvider } });

    await (await kernel.runner().step({ systemPrompt: '', history })).toolResults();
    await kernel.dispose();

    expect(telemetry.spans().map((s) => s.name)).to.deep.equal(['chat mock']);
    const ours = reports.filter((r) => r.plugin === 'otel');
    expect(ours.map((r) => r.hook)).to.include.members(['onToolCall', 'onToolResult']);
    expect(ours.filter((r) => r.detached).map((r) => r.hook).sort()).to.deep.equal(['onToolCall', 'onToolResult']);
  });

  it('ends its spans on every exit path while other hook plugins throw, reject or hang in every hook', async () => {
    const boom = (): never => {
      throw new Error('boom');
    };
    const throwing: StepHooks = { onStepStart: boom, onPart: boom, onToolCall: boom, onToolResult: boom, onStepEnd: boom, onCleanup: boom };
    const rejecting: StepHooks = Object.fromEntries(
      Object.keys(throwing).map((hook) => [hook, () => Promise.reject(new Error(`${hook} rejected`))]),
    );
    const hanging: StepHooks = { onStepEnd: () => new Promise<void>(() => undefined), onToolResult: () => new Promise<void>(() => undefined) };
    const extra = [
      definePlugin({ name: 'throwing', setup: (ctx) => ctx.bindHooks(throwing) }),
      definePlugin({ name: 'rejecting', setup: (ctx) => ctx.bindHooks(rejecting) }),
      definePlugin({ name: 'hanging', setup: (ctx) => ctx.bindHooks(hanging) }),
    ];
    const outcomes = ['success', 'provider error', 'abort'] as const;
    for (const outcome of outcomes) {
      const local = new Telemetry();
      const controller = new AbortController();
      const trailing = Array.from({ length: 10 }, () => textPart('more '));
      const parts = [...callParts('c1', 'add', '{}'), ...callParts('c2', 'fail', '{}'), ...trailing];
      const provider =
        outcome === 'provider error'
          ? new MockChatProvider(parts, { errorAfter: { parts: 5, error: new APIConnectionError('reset') } })
          : new MockChatProvider(parts, outcome === 'abort' ? { delayMs: 2 } : {});
      const toolset = testToolset((call) => {
        if (outcome === 'abort' && call.id === 'c2') setTimeout(() => controller.abort(), 0);
        return call.id === 'c2' ? 'error' : outcome === 'abort' ? 'untilAborted' : 'ok';
      });
      const { kernel, reports } = await kernelWith(local, provider, toolset, { extra });
      try {
        const result = await kernel.runner().step({ systemPrompt: '', history, signal: controller.signal, hookTimeoutMs: 20 });
        await result.toolResults();
      } catch {
        // the provider error or the abort
      }
      await kernel.dispose();

      const spans = local.spans();
      expect(spans.map((s) => s.name), outcome).to.have.members(['chat mock', 'execute_tool add', 'execute_tool fail']);
      const chat = local.span('chat mock');
      expect(isError(chat), outcome).to.equal(outcome !== 'success');
      for (const span of spans.filter((s) => s !== chat)) expect(parentOf(span), outcome).to.equal(idOf(chat));
      expect(local.span('execute_tool fail').attributes['error.type'], outcome).to.equal('tool_error');
      expect(reports.filter((r) => r.plugin === 'otel'), outcome).to.deep.equal([]);
      expect(reports.length, outcome).to.be.greaterThan(0);
      await local.shutdown();
    }
  });
});
