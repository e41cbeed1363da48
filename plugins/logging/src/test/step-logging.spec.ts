import {
  APIStatusError,
  definePlugin,
  textPart,
  toolCall,
  toolCallPart,
  toolError,
  toolOk,
  type ToolCall,
  type ToolContext,
  type ToolResult,
  type Toolset,
} from '@kosong/core';
import { MockChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';
import { loggingPlugin, StepLogger } from '../index.js';
import { fastRetry, kernelWith, LEVEL, MemoryDestination, providerPlugin, sequenceProvider, toolsetPlugin, type LogLine } from './support.js';

const history = [{ role: 'user' as const, content: [textPart('go')] }];
const base = { systemPrompt: 'You are terse.', history };

/** Echoes the call id and arguments; `fail` gives an error result, `explode` throws, `wait` waits for the abort. */
const toolset: Toolset = {
  tools: [{ name: 'echo', description: 'Echoes.', parameters: { type: 'object' } }],
  handle(call: ToolCall, context: ToolContext): ToolResult | Promise<ToolResult> {
    switch (call.function.name) {
      case 'fail':
        return { toolCallId: call.id, returnValue: toolError({ message: 'the file does not exist', brief: 'Not found' }) };
      case 'explode':
        throw new Error('the tool exploded');
      case 'wait':
        return new Promise((resolve) =>
          context.signal.addEventListener('abort', () => resolve({ toolCallId: call.id, returnValue: toolOk({ output: 'stopped' }) }), { once: true }),
        );
      case 'stuck':
        // Ignores its abort signal, settles long after the cleanup deadline.
        return new Promise((resolve) => setTimeout(() => resolve({ toolCallId: call.id, returnValue: toolOk({ output: 'late' }) }), 80));
      default:
        return { toolCallId: call.id, returnValue: toolOk({ output: `echo ${call.function.arguments ?? ''}` }) };
    }
  },
};

/** The toolset above, aborting `controller` once a call is running (while the model still streams). */
function abortingOnCall(controller: AbortController): Toolset {
  return { ...toolset, handle: (call, context) => (setTimeout(() => controller.abort(), 0), toolset.handle(call, context)) };
}

/** Text parts that keep the stream going after a tool call. */
const slowText = [textPart('one'), textPart('two'), textPart('three'), textPart('four')];

function expectContext(lines: readonly LogLine[], context: { stepId?: string; tenant: string | null; provider: string; model: string }): void {
  for (const line of lines) {
    expect(line).to.include({ tenant: context.tenant, provider: context.provider, model: context.model, name: 'kosong' });
    expect(line.stepId).to.be.a('string');
    if (context.stepId !== undefined) expect(line.stepId).to.equal(context.stepId);
  }
}

describe('loggingPlugin: step logs', () => {
  it('logs a successful step with tools: start, calls, results, end, cleanup, one JSON object per line with the step context', async () => {
    const destination = new MemoryDestination();
    const provider = new MockChatProvider([textPart('Let me look.'), toolCall('call-1', 'echo', '{"q":"a"}'), toolCall('call-2', 'echo', '{}')], {
      id: 'msg-42',
      usage: { inputOther: 10, output: 7, inputCacheRead: 5, inputCacheCreation: 1 },
      finishReason: 'tool_calls',
      modelName: 'mock-large',
    });
    const kernel = await kernelWith(providerPlugin(provider), toolsetPlugin(toolset), loggingPlugin({ destination, level: 'debug' }));
    kernel.tenants.define('acme');
    const result = await kernel.runner({ tenant: 'acme' }).step(base);
    await result.toolResults();
    await kernel.dispose();

    const lines = destination.lines;
    expectContext(lines, { stepId: result.stepId, tenant: 'acme', provider: 'mock', model: 'mock-large' });
    expect(lines[0]).to.include({ event: 'step.start', level: LEVEL.info, msg: 'step started', messages: 1 });
    expect(lines.at(-1)).to.deep.include({ event: 'step.cleanup', level: LEVEL.debug, cancelled: false, leaked: [] });
    expect(destination.events('tool.call').map((l) => [l.level, l['tool'], l['toolCallId'], l['index'], l['executed'], l['argumentsLength']])).to.deep.equal([
      [LEVEL.debug, 'echo', 'call-1', 0, true, 9],
      [LEVEL.debug, 'echo', 'call-2', 1, true, 2],
    ]);
    const results = destination.events('tool.result');
    expect(results.map((l) => [l.level, l.msg, l['toolCallId'], l['isError'], l['outputLength']])).to.have.deep.members([
      [LEVEL.info, 'tool result', 'call-1', false, 14],
      [LEVEL.info, 'tool result', 'call-2', false, 7],
    ]);
    for (const line of results) expect(line['durationMs']).to.be.a('number');
    const end = destination.only('step.end');
    expect(end).to.deep.include({
      level: LEVEL.info,
      msg: 'step completed',
      outcome: 'completed',
      finishReason: 'tool_calls',
      messageId: 'msg-42',
      toolCalls: 2,
      usage: { input: 16, output: 7, inputOther: 10, inputCacheRead: 5, inputCacheCreation: 1 },
    });
    expect(end['durationMs']).to.be.a('number').and.to.be.at.least(0);
    // Content stays out by default: neither arguments nor output, nor any part.
    for (const line of lines) expect(line).not.to.have.any.keys('arguments', 'output');
    expect(destination.events('step.part')).to.have.lengthOf(0);
  });

  it('logs at info by default: no debug lines; tenant null without a tenant', async () => {
    const destination = new MemoryDestination();
    const kernel = await kernelWith(providerPlugin(new MockChatProvider([toolCall('c', 'echo', '{}')])), toolsetPlugin(toolset), loggingPlugin({ destination }));
    await (await kernel.runner().step(base)).toolResults();
    await kernel.dispose();
    expect(destination.lines[0]!.event).to.equal('step.start');
    expect(destination.lines.map((l) => l.event)).to.have.members(['step.start', 'tool.result', 'step.end']);
    for (const line of destination.lines) expect(line).to.include({ tenant: null, provider: 'mock', model: 'mock' });
  });

  it('logs parts at debug with logParts, with their type and length only', async () => {
    const destination = new MemoryDestination();
    const parts = [textPart('hello'), toolCall('c', 'echo', '{"a"'), toolCallPart(':1}')];
    const kernel = await kernelWith(providerPlugin(new MockChatProvider(parts)), toolsetPlugin(toolset), loggingPlugin({ destination, level: 'debug', logParts: true }));
    await (await kernel.runner().step(base)).toolResults();
    await kernel.dispose();
    const logged = destination.events('step.part');
    expect(logged.map((l) => [l.level, l['partType'], l['length']])).to.deep.equal([
      [LEVEL.debug, 'text', 5],
      [LEVEL.debug, 'function', 4],
      [LEVEL.debug, 'tool_call_part', 3],
    ]);
    for (const raw of destination.raw.filter((r) => r.includes('"step.part"'))) expect(raw).not.to.match(/hello|\{"a"|:1\}/);
  });

  it('logs tool arguments and output with logContent', async () => {
    const destination = new MemoryDestination();
    const kernel = await kernelWith(
      providerPlugin(new MockChatProvider([toolCall('c', 'echo', '{"path":"a.txt"}')])),
      toolsetPlugin(toolset),
      loggingPlugin({ destination, level: 'debug', logContent: true }),
    );
    await (await kernel.runner().step(base)).toolResults();
    await kernel.dispose();
    expect(destination.only('tool.call')['arguments']).to.equal('{"path":"a.txt"}');
    expect(destination.only('tool.result')['output']).to.equal('echo {"path":"a.txt"}');
  });

  it('logs error results of tools at warn, with their message (a returned error and a throw)', async () => {
    const destination = new MemoryDestination();
    const kernel = await kernelWith(
      providerPlugin(new MockChatProvider([toolCall('a', 'fail', '{}'), toolCall('b', 'explode', '{}'), toolCall('c', 'echo', '{}')])),
      toolsetPlugin(toolset),
      loggingPlugin({ destination }),
    );
    await (await kernel.runner().step(base)).toolResults();
    await kernel.dispose();
    const byId = new Map(destination.events('tool.result').map((l) => [l['toolCallId'], l]));
    expect(byId.get('a')).to.include({ level: LEVEL.warn, msg: 'tool error', tool: 'fail', isError: true, message: 'the file does not exist' });
    expect(byId.get('b')).to.include({ level: LEVEL.warn, msg: 'tool error', tool: 'explode', isError: true });
    expect(byId.get('b')!['message']).to.include('the tool exploded');
    expect(byId.get('c')).to.include({ level: LEVEL.info, isError: false }).and.not.to.have.property('message');
    expect(destination.only('step.end')).to.include({ level: LEVEL.info, outcome: 'completed' });
  });

  it('logs a provider error at error level: name, message, statusCode, requestId, stack', async () => {
    const destination = new MemoryDestination();
    const failure = new APIStatusError(400, 'context too long', { requestId: 'req-7', cause: new Error('413 from the gateway') });
    // The call is complete (and dispatched) once the next part arrives; then the stream fails.
    const provider = new MockChatProvider([toolCall('a', 'wait', '{}'), textPart('Reading.'), textPart('never')], { errorAfter: { parts: 2, error: failure } });
    const kernel = await kernelWith(providerPlugin(provider), toolsetPlugin(toolset), loggingPlugin({ destination, level: 'debug' }));
    const rejection = await kernel.runner().step(base).then(
      () => undefined,
      (error: unknown) => error,
    );
    await kernel.dispose();
    expect(rejection).to.equal(failure);
    const end = destination.only('step.end');
    expect(end).to.deep.include({ level: LEVEL.error, msg: 'step failed', outcome: 'failed', toolCalls: 1 });
    const error = end['error'] as Record<string, unknown>;
    expect(error).to.include({ name: 'APIStatusError', message: 'context too long', statusCode: 400, requestId: 'req-7' });
    expect(error['stack']).to.be.a('string').and.to.include('APIStatusError: context too long');
    expect(error['cause']).to.include({ name: 'Error', message: '413 from the gateway' });
    expect(end).not.to.have.any.keys('usage', 'messageId');
    expect(destination.only('step.cleanup')).to.include({ level: LEVEL.debug, cancelled: true });
  });

  it('logs an abort at warn with the abort reason, and the cancelled cleanup', async () => {
    const destination = new MemoryDestination();
    const controller = new AbortController();
    const provider = new MockChatProvider([toolCall('a', 'wait', '{}'), ...slowText], { delayMs: 10 });
    const kernel = await kernelWith(providerPlugin(provider), toolsetPlugin(abortingOnCall(controller)), loggingPlugin({ destination, level: 'debug' }));
    const rejection = await kernel.runner().step({ ...base, signal: controller.signal }).then(
      () => undefined,
      (error: unknown) => error,
    );
    await kernel.dispose();
    expect(rejection).to.have.property('name', 'AbortError');
    const end = destination.only('step.end');
    expect(end).to.include({ level: LEVEL.warn, msg: 'step aborted', outcome: 'aborted' });
    expect(end['error']).to.include({ name: 'AbortError' });
    expect(destination.only('step.cleanup')).to.include({ cancelled: true });
  });

  it('logs tools leaked past the cleanup deadline at warn, naming them', async () => {
    const destination = new MemoryDestination();
    const controller = new AbortController();
    const provider = new MockChatProvider([toolCall('s', 'stuck', '{}'), ...slowText], { delayMs: 10 });
    const kernel = await kernelWith(providerPlugin(provider), toolsetPlugin(abortingOnCall(controller)), loggingPlugin({ destination }));
    await kernel.runner().step({ ...base, signal: controller.signal }).catch(() => undefined);
    await kernel.dispose();
    expect(destination.only('step.cleanup')).to.deep.include({ level: LEVEL.warn, msg: 'tools leaked', cancelled: true, leaked: [{ tool: 'stuck', toolCallId: 's' }] });
    await new Promise((resolve) => setTimeout(resolve, 80)); // let the stuck tool settle
  });

  it('logs a retry of kernel.agent() at warn between the failed and the next attempt', async () => {
    const destination = new MemoryDestination();
    const failure = new APIStatusError(503, 'overloaded', { requestId: 'req-9' });
    const kernel = await kernelWith(providerPlugin(sequenceProvider([{ error: failure }, [textPart('ok')]])), loggingPlugin({ destination, level: 'debug' }));
    kernel.tenants.define('acme');
    const turn = await kernel.agent({ tenant: 'acme', systemPrompt: 'hi', retry: fastRetry, random: () => 0 }).run('go');
    await kernel.dispose();
    expect(turn.steps).to.equal(1);

    const lines = destination.lines;
    expect(lines.map((l) => l.event)).to.deep.equal(['step.start', 'step.end', 'step.cleanup', 'step.retry', 'step.start', 'step.end', 'step.cleanup']);
    expectContext(lines, { tenant: 'acme', provider: 'sequence', model: 'sequence-model' });
    const [failedAttempt, retry, nextAttempt] = [lines[0]!, lines[3]!, lines[4]!];
    expect(retry.stepId).to.equal(failedAttempt.stepId);
    expect(nextAttempt.stepId).not.to.equal(failedAttempt.stepId);
    expect(retry).to.deep.include({ level: LEVEL.warn, msg: 'retrying step', step: 1, attempt: 1, nextAttempt: 2, delayMs: 1 });
    expect(retry['error']).to.include({ name: 'APIStatusError', message: 'overloaded', statusCode: 503, requestId: 'req-9' });
    expect(lines[1]).to.include({ level: LEVEL.error, outcome: 'failed' });
    expect(lines[5]).to.include({ level: LEVEL.info, outcome: 'completed' });
  });

  it("is the kernel's hook-error sink: logs another plugin's hook failures with the step context", async () => {
    const destination = new MemoryDestination();
    const broken = new TypeError('cannot read properties of undefined');
    const flaky = definePlugin({
      name: 'flaky',
      setup: (ctx) =>
        ctx.bindHooks({
          onStepStart: () => {
            throw broken;
          },
          onToolResult: () => Promise.reject(new Error('metrics backend down')),
          onToolCall: () => new Promise<void>(() => undefined), // never settles: times out
          onCleanup: () => {
            throw new Error('after cleanup');
          },
        }),
    });
    const kernel = await kernelWith(providerPlugin(new MockChatProvider([toolCall('a', 'echo', '{}')])), toolsetPlugin(toolset), loggingPlugin({ destination }), flaky);
    kernel.tenants.define('acme');
    const result = await kernel.runner({ tenant: 'acme' }).step(base);
    await result.toolResults();
    await kernel.dispose();

    const failures = destination.events('hook.error');
    expectContext(failures, { stepId: result.stepId, tenant: 'acme', provider: 'mock', model: 'mock' });
    const byHook = new Map(failures.map((l) => [l['hook'], l]));
    expect([...byHook.keys()]).to.have.members(['onStepStart', 'onToolResult', 'onToolCall', 'onCleanup']);
    expect(byHook.get('onStepStart')).to.deep.include({ level: LEVEL.error, msg: 'hook failed', plugin: 'flaky', kind: 'threw', detached: false });
    expect(byHook.get('onStepStart')!['error']).to.include({ name: 'TypeError', message: 'cannot read properties of undefined' });
    expect(byHook.get('onToolResult')).to.include({ level: LEVEL.error, kind: 'rejected' });
    expect(byHook.get('onToolCall')).to.include({ level: LEVEL.warn, kind: 'timeout' });
    // Reported after the logging plugin's own cleanup hook ran: the step's context is still known.
    expect(byHook.get('onCleanup')).to.include({ kind: 'threw', provider: 'mock' });
  });

  it('logs a hook failure of an unknown step with null provider and model; never throws, even when the logger does', () => {
    const destination = new MemoryDestination();
    const logs = new StepLogger({ destination });
    logs.hookErrorSink.report({ plugin: 'agent', hook: 'onEvent', stepId: '-', tenant: undefined, provider: undefined, model: undefined, kind: 'threw', error: 'boom', detached: false });
    expect(destination.only('hook.error')).to.deep.include({ stepId: '-', tenant: null, provider: null, model: null, error: { message: 'boom' } });

    const failing = new StepLogger({
      destination: {
        write: () => {
          throw new Error('disk full');
        },
      },
    });
    const stderr: string[] = [];
    const original = process.stderr.write;
    process.stderr.write = ((chunk: string) => (stderr.push(chunk), true)) as typeof process.stderr.write;
    try {
      expect(() => failing.hookErrorSink.report({ plugin: 'p', hook: 'onPart', stepId: 's', tenant: 't', provider: undefined, model: undefined, kind: 'rejected', error: new Error('x'), detached: true })).not.to.throw();
    } finally {
      process.stderr.write = original;
    }
    expect(stderr.join('')).to.include('p.onPart').and.to.include('disk full');
  });

  it('takes a StepLogger, flushes it on dispose, and rejects conflicting options', async () => {
    const destination = new MemoryDestination();
    const logs = new StepLogger({ destination });
    const kernel = await kernelWith(loggingPlugin(logs));
    await kernel.dispose();
    expect(destination.flushes).to.equal(1);
    expect(() => loggingPlugin({ logger: logs.logger, destination })).to.throw(TypeError, /either `logger` or `destination`/);
    expect(() => loggingPlugin({ secrets: [42 as unknown as string] })).to.throw(TypeError, /secrets\[0\]/);
  });
});
