import {
  APIConnectionError,
  APIStatusError,
  Agent,
  Kernel,
  LinearContext,
  definePlugin,
  isRetryableError,
  retryDelayMs,
  defaultRetryPolicy,
  step,
  textPart,
  toolCall,
  toolError,
  toolOk,
  imageURLPart,
  APIEmptyResponseError,
  APITimeoutError,
  type AgentEvent,
  type ChatProvider,
  type HookErrorReport,
  type Message,
  type StreamedMessagePart,
  type Toolset,
} from '@kosong/core';
import { toolResultToMessage } from '@kosong/core/context-kit';
import { MockChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';
import { FakeToolset, sleep } from './support.js';

/** One scripted response per `generate` call: parts to stream, or an error to fail with. */
type Turn = readonly StreamedMessagePart[] | { readonly error: unknown };

/** A provider that plays `turns` in order, one per call (a MockChatProvider per turn). */
function sequence(turns: readonly Turn[]): ChatProvider & { calls: number } {
  let calls = 0;
  const provider = {
    name: 'sequence',
    modelName: 'sequence',
    thinkingEffort: undefined,
    get calls() {
      return calls;
    },
    generate(...args: Parameters<ChatProvider['generate']>) {
      const turn = turns[calls++];
      if (turn === undefined) return Promise.reject(new Error(`no turn ${calls}`));
      const mock = 'error' in turn ? new MockChatProvider([], { generateError: turn.error }) : new MockChatProvider(turn);
      return mock.generate(...args);
    },
    withThinking() {
      return provider;
    },
    generation: {},
    withGeneration() {
      return provider;
    },
  };
  return provider;
}

const fastRetry = { initialDelayMs: 1, maxDelayMs: 5, jitterMs: 0 };

function agentWith(provider: ChatProvider, toolset: Toolset, extra: Partial<ConstructorParameters<typeof Agent>[0]> = {}): Agent {
  return new Agent({
    systemPrompt: 'You are a test.',
    step: (options) => step({ ...options, provider, toolset }),
    retry: fastRetry,
    ...extra,
  });
}

describe('Agent', () => {
  it('runs steps until one makes no tool calls, adding the assistant and tool messages in call order', async () => {
    const provider = sequence([
      [textPart('Looking.'), toolCall('a', 'fake', '{"n":1}'), toolCall('b', 'fake', '{"n":2}')],
      [textPart('Done.')],
    ]);
    const toolset = new FakeToolset((c) => ({ kind: 'async', ms: c.id === 'a' ? 20 : 1 })); // b finishes first
    const events: AgentEvent[] = [];
    const agent = agentWith(provider, toolset);
    const result = await agent.run('go', { onEvent: (e) => void events.push(e) });

    expect(result.stopReason).to.equal('no_tool_calls');
    expect(result.steps).to.equal(2);
    expect(result.message).to.deep.equal({ role: 'assistant', content: [textPart('Done.')] });
    expect(agent.context.history.map((m) => [m.role, m.toolCallId ?? ''])).to.deep.equal([
      ['user', ''],
      ['assistant', ''],
      ['tool', 'a'],
      ['tool', 'b'],
      ['assistant', ''],
    ]);
    expect(agent.context.history[2]!.content).to.deep.equal([textPart('a:{"n":1}')]);
    const types = events.map((e) => e.type);
    expect(types.filter((t) => t === 'step_start')).to.have.length(2);
    expect(types.filter((t) => t === 'tool_result')).to.have.length(2);
    expect(types.at(-1)).to.equal('step_end');
  });

  it('stops at maxSteps', async () => {
    const loop: Turn = [toolCall('again', 'fake', '{}')];
    const agent = agentWith(sequence([loop, loop, loop, loop]), new FakeToolset(), { maxSteps: 3 });
    const result = await agent.run('loop forever');
    expect(result).to.include({ stopReason: 'max_steps', steps: 3 });
    expect(agent.context.history.filter((m) => m.role === 'assistant')).to.have.length(3);
  });

  it('retries retryable failures with backoff and keeps no partial message', async () => {
    const provider = sequence([{ error: new APIConnectionError('reset') }, { error: new APITimeoutError('slow') }, [textPart('finally')]]);
    const events: AgentEvent[] = [];
    const agent = agentWith(provider, new FakeToolset(), { retry: { ...fastRetry, maxAttempts: 3 } });
    const result = await agent.run('hi', { onEvent: (e) => void events.push(e) });
    expect(result.message.content).to.deep.equal([textPart('finally')]);
    expect(provider.calls).to.equal(3);
    const retries = events.filter((e): e is Extract<AgentEvent, { type: 'retry' }> => e.type === 'retry');
    expect(retries.map((r) => [r.attempt, r.nextAttempt, (r.error as Error).name])).to.deep.equal([
      [1, 2, 'APIConnectionError'],
      [2, 3, 'APITimeoutError'],
    ]);
    expect(agent.context.history.map((m) => m.role)).to.deep.equal(['user', 'assistant']);
  });

  it('honours retry-after', async () => {
    const provider = sequence([{ error: new APIStatusError(429, 'slow down', { retryAfterSeconds: 0.08 }) }, [textPart('ok')]]);
    const events: AgentEvent[] = [];
    const started = performance.now();
    await agentWith(provider, new FakeToolset()).run('hi', { onEvent: (e) => void events.push(e) });
    expect(performance.now() - started).to.be.at.least(75);
    expect(events.find((e) => e.type === 'retry')).to.include({ delayMs: 80 });
  });

  it('fails with the last error when out of attempts, the context intact', async () => {
    const last = new APIStatusError(503, 'still down');
    const provider = sequence([{ error: new APIStatusError(500, 'down') }, { error: new APIStatusError(502, 'down') }, { error: last }]);
    const agent = agentWith(provider, new FakeToolset());
    const caught = await agent.run('hi').catch((e: unknown) => e);
    expect(caught).to.equal(last);
    expect(agent.context.history.map((m) => m.role)).to.deep.equal(['user']);
  });

  it('does not retry what is not retryable', async () => {
    const error = new APIStatusError(400, 'bad request');
    const provider = sequence([{ error }, [textPart('never')]]);
    const caught = await agentWith(provider, new FakeToolset()).run('hi').catch((e: unknown) => e);
    expect(caught).to.equal(error);
    expect(provider.calls).to.equal(1);
  });

  it('an abort during the retry wait rejects at once with the reason', async () => {
    const provider = sequence([{ error: new APIConnectionError('reset') }, [textPart('late')]]);
    const controller = new AbortController();
    const agent = agentWith(provider, new FakeToolset(), { retry: { maxAttempts: 3, initialDelayMs: 5_000, jitterMs: 0 } });
    const started = performance.now();
    const running = agent.run('hi', { signal: controller.signal, onEvent: (e) => void (e.type === 'retry' && controller.abort(new Error('stop'))) });
    const caught = await running.catch((e: unknown) => e);
    expect(caught).to.have.property('message', 'stop');
    expect(performance.now() - started).to.be.below(1_000);
    expect(provider.calls).to.equal(1);
  });

  it('an abort while tools run saves nothing of that step', async () => {
    const controller = new AbortController();
    const toolset = new FakeToolset(() => ({ kind: 'settleAfterAbort', ms: 5 }));
    const agent = agentWith(sequence([[textPart('working'), toolCall('t', 'fake', '{}')]]), toolset);
    const running = agent.run('hi', { signal: controller.signal });
    await sleep(10);
    controller.abort(new Error('ctrl-c'));
    expect(await running.catch((e: unknown) => (e as Error).message)).to.equal('ctrl-c');
    expect(toolset.records[0]!.sawAbort).to.equal(true);
    expect(agent.context.history.map((m) => m.role)).to.deep.equal(['user']);
  });

  it('guards onEvent: a throwing or rejecting callback is reported and the turn goes on', async () => {
    const reports: HookErrorReport[] = [];
    const agent = agentWith(sequence([[textPart('ok')]]), new FakeToolset(), { onHookError: (r) => reports.push(r) });
    let n = 0;
    const result = await agent.run('hi', {
      onEvent: () => {
        n++;
        if (n === 1) throw new Error('sync');
        if (n === 2) return Promise.reject(new Error('async'));
        return undefined;
      },
    });
    await sleep(0);
    expect(result.message.content).to.deep.equal([textPart('ok')]);
    expect(reports.map((r) => [r.plugin, r.hook, r.kind])).to.deep.equal([
      ['agent', 'onEvent', 'threw'],
      ['agent', 'onEvent', 'rejected'],
    ]);
  });

  it('persists every step to a JSONL context that restores to the same history', async () => {
    const { mkdtemp, rm } = await import('node:fs/promises');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = await mkdtemp(join(tmpdir(), 'kosong-agent-'));
    try {
      const path = join(dir, 'session.jsonl');
      const context = new LinearContext(path);
      const agent = agentWith(sequence([[toolCall('a', 'fake', '{}')], [textPart('bye')]]), new FakeToolset(), { context });
      await agent.run('hi');
      await context.close();
      const restored = new LinearContext(path);
      await restored.restore();
      expect(restored.history).to.deep.equal(agent.context.history);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('hands its steps no hooks of its own unless onRetry needs the attempts\' ids (a step without hooks takes the fast path)', async () => {
    const seen: (readonly { name: string }[] | undefined)[] = [];
    const retried: string[] = [];
    const provider = sequence([{ error: new APIConnectionError('down') }, [textPart('Hi.')], [textPart('Hi.')]]);
    const make = (extra: Partial<ConstructorParameters<typeof Agent>[0]>) =>
      new Agent({ systemPrompt: '', retry: fastRetry, step: (options) => (seen.push(options.hooks), step({ ...options, provider, toolset: new FakeToolset() })), ...extra });
    await make({ onRetry: (retry) => void retried.push(retry.stepId) }).run('one');
    expect(seen.map((hooks) => hooks?.map((h) => h.name))).to.deep.equal([['agent'], ['agent']]);
    expect(retried).to.have.length(1);
    expect(retried[0]).to.match(/^[0-9a-f-]{36}$/); // the failed attempt's id, learnt by the agent's hook
    seen.length = 0;
    await make({}).run('two');
    expect(seen).to.deep.equal([[]]);
  });

  it('tells kernel hooks about retries (onRetry), with the id of the failed attempt and the tenant', async () => {
    const kernel = new Kernel();
    const ended: { stepId: string; error: unknown }[] = [];
    const retries: { stepId: string; tenant: string | undefined; attempt: number; error: unknown }[] = [];
    const failure = new APIConnectionError('reset');
    await kernel.use(
      definePlugin({ name: 'models', setup: (ctx) => ctx.bindChatProvider('seq', sequence([{ error: failure }, [textPart('ok')]])) }),
      definePlugin({
        name: 'retry-log',
        setup: (ctx) =>
          ctx.bindHooks({
            onStepEnd: (e) => void ended.push({ stepId: e.stepId, error: e.error }),
            onRetry: (e) => void retries.push({ stepId: e.stepId, tenant: e.tenant, attempt: e.attempt, error: e.error }),
          }),
      }),
    );
    kernel.tenants.define('acme');
    await kernel.agent({ tenant: 'acme', systemPrompt: 'hi', retry: fastRetry }).run('go');
    expect(retries).to.deep.equal([{ stepId: ended[0]!.stepId, tenant: 'acme', attempt: 1, error: failure }]);
    expect(ended.map((e) => e.error)).to.deep.equal([failure, undefined]);
    await kernel.dispose();
  });

  it('runs through the kernel with the tenant toolset and hooks (kernel.agent)', async () => {
    const kernel = new Kernel();
    const seen: string[] = [];
    await kernel.use(
      definePlugin({
        name: 'models',
        setup: (ctx) => ctx.bindChatProvider('seq', sequence([[toolCall('a', 'fake', '{}')], [textPart('done')]])),
      }),
      definePlugin({ name: 'spy', setup: (ctx) => ctx.bindHooks({ onStepStart: (e) => void seen.push(`${e.tenant}:${e.provider}`) }) }),
    );
    const acmeTools = new FakeToolset();
    kernel.tenants.define('acme', { toolset: acmeTools });
    const result = await kernel.agent({ tenant: 'acme', systemPrompt: 'hi', retry: fastRetry }).run('go');
    expect(result.steps).to.equal(2);
    expect(acmeTools.records.map((r) => r.call.id)).to.deep.equal(['a']);
    expect(seen).to.deep.equal(['acme:sequence', 'acme:sequence']);
    await kernel.dispose();
  });
});

describe('retry policy', () => {
  it('retries connection, timeout, empty-response and 429/5xx errors only', () => {
    expect(isRetryableError(new APIConnectionError('x'))).to.equal(true);
    expect(isRetryableError(new APITimeoutError('x'))).to.equal(true);
    expect(isRetryableError(new APIEmptyResponseError('x'))).to.equal(true);
    for (const status of [429, 500, 502, 503, 504, 529]) expect(isRetryableError(new APIStatusError(status, 'x')), String(status)).to.equal(true);
    for (const status of [400, 401, 403, 404, 422, 501]) expect(isRetryableError(new APIStatusError(status, 'x')), String(status)).to.equal(false);
    expect(isRetryableError(new Error('bug'))).to.equal(false);
    expect(isRetryableError(new DOMException('aborted', 'AbortError'))).to.equal(false);
  });

  it('backs off exponentially with jitter, capped, and prefers retry-after', () => {
    const policy = { ...defaultRetryPolicy, initialDelayMs: 300, maxDelayMs: 5_000, jitterMs: 500 };
    expect(retryDelayMs(policy, 1, new Error(), () => 0)).to.equal(300);
    expect(retryDelayMs(policy, 2, new Error(), () => 0)).to.equal(600);
    expect(retryDelayMs(policy, 3, new Error(), () => 0.5)).to.equal(1_450);
    expect(retryDelayMs(policy, 10, new Error(), () => 0)).to.equal(5_000);
    expect(retryDelayMs(policy, 1, new APIStatusError(429, 'x', { retryAfterSeconds: 2 }))).to.equal(2_000);
    expect(retryDelayMs(policy, 1, new APIStatusError(429, 'x', { retryAfterSeconds: 3_600 }))).to.equal(60_000);
  });
});

describe('toolResultToMessage', () => {
  const result = (returnValue: ReturnType<typeof toolOk>) => toolResultToMessage({ toolCallId: 'c', returnValue });
  const text = (m: Message) => m.content.map((p) => (p.type === 'text' ? p.text : `[${p.type}]`));

  it('follows kimi-cli: errors, messages, empty output, non-text output', () => {
    expect(text(result(toolOk({ output: '42' })))).to.deep.equal(['42']);
    expect(text(result(toolOk({ output: '42', message: 'Computed.' })))).to.deep.equal(['<system>Computed.</system>', '42']);
    expect(text(result(toolOk({ output: '' })))).to.deep.equal(['<system>Tool output is empty.</system>']);
    expect(text(result(toolOk({ output: imageURLPart('data:image/png;base64,AA') })))).to.deep.equal([
      '<system>Tool returned non-text content.</system>',
      '[image_url]',
    ]);
    expect(text(result(toolError({ message: 'No such file', brief: 'x', output: 'trace' })))).to.deep.equal([
      '<system>ERROR: No such file</system>',
      'trace',
    ]);
    expect(result(toolOk({ output: 'x' }))).to.include({ role: 'tool', toolCallId: 'c' });
  });
});
