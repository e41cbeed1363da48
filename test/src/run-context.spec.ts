import { AsyncLocalStorage } from 'node:async_hooks';
import {
  APIConnectionError,
  Agent,
  Kernel,
  definePlugin,
  step,
  textPart,
  toolCall,
  toolOk,
  type ChatProvider,
  type ContextScope,
  type HookErrorReport,
  type Message,
  type NamedStepHooks,
  type StepHooks,
  type ToolCall,
  type ToolContext,
  type ToolResult,
  type Toolset,
} from '@kosong/core';
import { MockChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';
import { abortableSleep, deepFreeze, namesOf, recordingHooks } from './support.js';

const history: readonly Message[] = deepFreeze([{ role: 'user', content: [textPart('go')] }]);
const base = { systemPrompt: 'You are a test.', history };

interface RunContext {
  readonly user: string;
}

/** A toolset whose calls wait a little (0–3 ms, by the call's id) and answer with the user of their run context. */
const whoAmI: Toolset<RunContext> = {
  tools: [{ name: 'who', description: 'Says who asked.', parameters: { type: 'object' } }],
  async handle(call: ToolCall, context: ToolContext<RunContext>): Promise<ToolResult> {
    await abortableSleep(call.id.length % 4, context.signal);
    return { toolCallId: call.id, returnValue: toolOk({ output: context.context?.user ?? '(none)' }) };
  },
};

/** A provider that records, at each `generate`, the chain of scopes active then (see {@link scopeHooks}). */
function recordingProvider(inner: ChatProvider, store: AsyncLocalStorage<readonly string[]>, seen: (readonly string[] | undefined)[]): ChatProvider {
  return {
    name: inner.name,
    modelName: inner.modelName,
    thinkingEffort: inner.thinkingEffort,
    generation: inner.generation,
    generate(...args) {
      seen.push(store.getStore());
      return inner.generate(...args);
    },
    withThinking: (effort) => inner.withThinking(effort),
    withGeneration: (options) => inner.withGeneration(options),
  };
}

/** Hooks whose `runInContext` pushes `label:kind` on an AsyncLocalStorage chain, as a tracer would make its span active. */
function scopeHooks(store: AsyncLocalStorage<readonly string[]>, label = 'scope', scopes: ContextScope[] = []): NamedStepHooks {
  return {
    name: label,
    hooks: {
      runInContext<T>(scope: ContextScope, run: () => T): T {
        scopes.push(scope);
        return store.run([...(store.getStore() ?? []), `${label}:${scope.kind}`], run);
      },
    },
  };
}

describe('run context', () => {
  let hookErrors: HookErrorReport[];
  const onHookError = (report: HookErrorReport): void => void hookErrors.push(report);
  beforeEach(() => {
    hookErrors = [];
  });

  describe('step({ context })', () => {
    it('reaches every tool call of its own run, with 200 steps running at once', async () => {
      const runs = Array.from({ length: 200 }, (_, i) => {
        const calls = Array.from({ length: 3 }, (_, c) => toolCall(`s${i}-c${c}${'x'.repeat(c)}`, 'who', '{}'));
        const context: RunContext = { user: `user-${i}` };
        return step({ ...base, provider: new MockChatProvider([textPart('asking'), ...calls], { delayMs: i % 3 }), toolset: whoAmI, context });
      });
      const results = await Promise.all(runs.map(async (run) => (await run).toolResults()));
      results.forEach((stepResults, i) => {
        expect(stepResults.map((r) => r.returnValue.output)).to.deep.equal([`user-${i}`, `user-${i}`, `user-${i}`]);
      });
    });

    it('is carried, as the same value, by every hook event of its step', async () => {
      const context = { user: 'ada', db: { query: () => 'rows' } };
      const { entry, events } = recordingHooks();
      const result = await step({ ...base, provider: new MockChatProvider([textPart('hi'), toolCall('c1', 'who', '{}')]), toolset: whoAmI, context, hooks: [entry] });
      await result.toolResults();
      expect(namesOf(events)).to.deep.equal(['onStepStart', 'onPart', 'onPart', 'onToolCall', 'onStepEnd', 'onToolResult', 'onCleanup']);
      const seen = events.map(([hook, event]) => [hook, (event as { context?: unknown }).context] as const);
      for (const [hook, value] of seen) expect(value, hook).to.equal(context);
    });

    it('is undefined in tools and events when none is given', async () => {
      let startContext: unknown = 'not called';
      const result = await step({
        ...base,
        provider: new MockChatProvider([toolCall('c1', 'who', '{}')]),
        toolset: whoAmI,
        hooks: [{ name: 'r', hooks: { onStepStart: (e) => void (startContext = e.context) } }],
      });
      expect((await result.toolResults())[0]!.returnValue.output).to.equal('(none)');
      expect(startContext).to.equal(undefined);
    });

    it('onStepStart carries the system prompt and the tool definitions', async () => {
      let start: { systemPrompt?: string; tools?: readonly unknown[] } = {};
      await step({ ...base, provider: new MockChatProvider([textPart('hi')]), toolset: whoAmI, hooks: [{ name: 'r', hooks: { onStepStart: (e) => void (start = e) } }] });
      expect(start.systemPrompt).to.equal('You are a test.');
      expect(start.tools).to.equal(whoAmI.tools);
    });
  });

  describe('runner.step({ context }) and agent.run(input, { context })', () => {
    it('a kernel runner hands the context to tools and hooks', async () => {
      const kernel = new Kernel();
      let hookContext: unknown;
      await kernel.use(
        definePlugin({
          name: 'p',
          setup(ctx) {
            ctx.bindChatProvider('mock', new MockChatProvider([toolCall('c1', 'who', '{}')]), { default: true });
            ctx.bindToolset(whoAmI as Toolset);
            ctx.bindHooks({ onToolResult: (e) => void (hookContext = e.context) });
          },
        }),
      );
      const context: RunContext = { user: 'grace' };
      const result = await kernel.runner().step({ ...base, context });
      expect((await result.toolResults())[0]!.returnValue.output).to.equal('grace');
      expect(hookContext).to.equal(context);
      await kernel.dispose();
    });

    it('an agent turn hands its context to the tools of every step, and to the retry notice', async () => {
      let attempt = 0;
      const retries: unknown[] = [];
      const agent = new Agent({
        systemPrompt: '',
        retry: { initialDelayMs: 1, maxDelayMs: 1 },
        onRetry: (retry) => void retries.push(retry.context),
        step: async (options) => {
          attempt++;
          if (attempt === 1) throw new APIConnectionError('flaky');
          const parts = attempt === 2 ? [toolCall('c1', 'who', '{}')] : [textPart('done')];
          return step({ ...options, provider: new MockChatProvider(parts), toolset: whoAmI });
        },
      });
      const context: RunContext = { user: 'linus' };
      const turn = await agent.run('hi', { context });
      expect(turn.steps).to.equal(2);
      const toolMessage = agent.context.history.find((m) => m.role === 'tool');
      expect(toolMessage?.content).to.deep.equal([textPart('linus')]);
      expect(retries).to.deep.equal([context]);
    });
  });

  describe('StepHooks.runInContext', () => {
    it('runs the provider call in a request scope, and each tool call in its tool scope inside it', async () => {
      const store = new AsyncLocalStorage<readonly string[]>();
      const providerSaw: (readonly string[] | undefined)[] = [];
      const toolSaw: (readonly string[] | undefined)[] = [];
      const scopes: ContextScope[] = [];
      const toolset: Toolset = {
        tools: whoAmI.tools,
        async handle(call) {
          await new Promise((resolve) => setTimeout(resolve, 1));
          toolSaw.push(store.getStore()); // after an await: the context went along
          return { toolCallId: call.id, returnValue: toolOk({ output: 'ok' }) };
        },
      };
      const provider = recordingProvider(new MockChatProvider([textPart('a'), toolCall('c1', 'who', '{}'), toolCall('c2', 'who', '{}')]), store, providerSaw);
      const result = await step({ ...base, provider, toolset, context: 'ctx', hooks: [scopeHooks(store, 'otel', scopes)] });
      await result.toolResults();
      expect(providerSaw).to.deep.equal([['otel:request']]);
      expect(toolSaw).to.deep.equal([
        ['otel:request', 'otel:tool'],
        ['otel:request', 'otel:tool'],
      ]);
      expect(scopes.map((s) => s.kind)).to.deep.equal(['request', 'tool', 'tool']);
      const [request, first, second] = scopes as [ContextScope & { stepId: string }, ContextScope & { index: number; toolCallId: string }, ContextScope & { index: number }];
      expect(request).to.include({ stepId: result.stepId, provider: 'mock', context: 'ctx' });
      expect(first).to.include({ index: 0, toolCallId: 'c1', context: 'ctx' });
      expect(second).to.include({ index: 1 });
      expect(Object.isFrozen(request)).to.equal(true);
    });

    it('nests the hooks of several owners in registration order; a deferred call runs in its tool scope only', async () => {
      const store = new AsyncLocalStorage<readonly string[]>();
      const toolSaw: (readonly string[] | undefined)[] = [];
      const toolset: Toolset = {
        tools: whoAmI.tools,
        handle: (call) => {
          toolSaw.push(store.getStore());
          return { toolCallId: call.id, returnValue: toolOk({ output: 'ok' }) };
        },
      };
      const result = await step({
        ...base,
        provider: new MockChatProvider([toolCall('c1', 'who', '{}')]),
        toolset,
        dispatch: 'deferred',
        hooks: [scopeHooks(store, 'a'), { name: 'plain', hooks: { onStepStart: () => undefined } }, scopeHooks(store, 'b')],
      });
      await result.toolResults();
      expect(toolSaw).to.deep.equal([['a:tool', 'b:tool']]);
    });

    it('wraps an agent turn: its steps, their requests and tools run inside the turn scope', async () => {
      const store = new AsyncLocalStorage<readonly string[]>();
      const providerSaw: (readonly string[] | undefined)[] = [];
      const scopes: ContextScope[] = [];
      const scripts = [[toolCall('c1', 'who', '{}')], [textPart('done')]];
      const agent = new Agent({
        name: 'helper',
        systemPrompt: '',
        step: (options) => step({ ...options, provider: recordingProvider(new MockChatProvider(scripts.shift()!), store, providerSaw), toolset: whoAmI }),
      });
      await agent.run('hi', { hooks: [scopeHooks(store, 'otel', scopes)], context: { user: 'x' } });
      expect(providerSaw).to.deep.equal([
        ['otel:turn', 'otel:request'],
        ['otel:turn', 'otel:request'],
      ]);
      expect(scopes.map((s) => s.kind)).to.deep.equal(['turn', 'request', 'tool', 'request']);
      expect(scopes[0]).to.include({ kind: 'turn', agent: 'helper', tenant: undefined });
      expect(scopes[0]).to.have.property('context').that.deep.equals({ user: 'x' });
    });

    it("kernel.agent() runs each turn inside its scope's hooks, with the tenant, provider and model filled in", async () => {
      const store = new AsyncLocalStorage<readonly string[]>();
      const scopes: ContextScope[] = [];
      const providerSaw: (readonly string[] | undefined)[] = [];
      const kernel = new Kernel();
      await kernel.use(
        definePlugin({
          name: 'models',
          setup(ctx) {
            ctx.bindChatProvider('mock', () => recordingProvider(new MockChatProvider([textPart('hello')]), store, providerSaw), { default: true });
          },
        }),
        definePlugin({ name: 'otel', setup: (ctx) => ctx.bindHooks(scopeHooks(store, 'otel', scopes).hooks) }),
      );
      kernel.tenants.define('acme', {});
      await kernel.agent({ tenant: 'acme', systemPrompt: '', name: 'support' }).run('hi');
      expect(providerSaw).to.deep.equal([['otel:turn', 'otel:request']]);
      expect(scopes[0]).to.include({ kind: 'turn', agent: 'support', tenant: 'acme', provider: 'mock', model: 'mock' });
      await kernel.dispose();
    });

    it('a hook that misbehaves never breaks the step: the work runs once, its own result stands, the failure is reported', async () => {
      const misbehaving: [string, (scope: ContextScope, run: () => unknown) => unknown][] = [
        ['throws before run', () => {
          throw new Error('before');
        }],
        ['throws after run', (_scope, run) => {
          run();
          throw new Error('after');
        }],
        ['never calls run', () => 'something else'],
        ['calls run twice', (_scope, run) => {
          run();
          return run();
        }],
        ['is async', async (_scope, run) => {
          await Promise.resolve();
          return run();
        }],
        ['rejects without running', () => Promise.reject(new Error('async failure'))],
        ['returns another value', (_scope, run) => {
          run();
          return Promise.resolve({ forged: true });
        }],
      ];
      for (const [label, fn] of misbehaving) {
        hookErrors = [];
        let generated = 0;
        let handled = 0;
        const inner = new MockChatProvider([textPart('hi'), toolCall('c1', 'who', '{}')]);
        const provider: ChatProvider = { ...recordingProvider(inner, new AsyncLocalStorage(), []), generate: (...args) => (generated++, inner.generate(...args)) };
        const toolset: Toolset = { tools: whoAmI.tools, handle: (call) => (handled++, { toolCallId: call.id, returnValue: toolOk({ output: 'real' }) }) };
        const hooks = { name: 'bad', hooks: { runInContext: fn } as StepHooks };
        const result = await step({ ...base, provider, toolset, hooks: [hooks], onHookError });
        const results = await result.toolResults();
        await new Promise((resolve) => setImmediate(resolve)); // let a rejection be reported
        expect(result.message.content, label).to.deep.equal([textPart('hi')]);
        expect(results.map((r) => r.returnValue.output), label).to.deep.equal(['real']);
        expect([generated, handled], `${label}: the work ran once each`).to.deep.equal([1, 1]);
        if (label === 'returns another value') {
          expect(hookErrors, label).to.deep.equal([]);
        } else {
          expect(hookErrors.length, label).to.be.at.least(1);
          expect(hookErrors.every((r) => r.plugin === 'bad' && r.hook === 'runInContext' && r.stepId === result.stepId), label).to.equal(true);
        }
      }
    });

    it('is detached after three failures in one step', async () => {
      let calls = 0;
      const calls10 = Array.from({ length: 10 }, (_, i) => toolCall(`c${i}`, 'who', '{}'));
      const result = await step({
        ...base,
        provider: new MockChatProvider(calls10),
        toolset: whoAmI,
        onHookError,
        hooks: [{ name: 'bad', hooks: { runInContext: () => void calls++ } as StepHooks }],
      });
      expect((await result.toolResults()).length).to.equal(10);
      expect(calls).to.equal(3);
      expect(hookErrors.map((r) => r.detached)).to.deep.equal([false, false, true]);
    });

    it("the work's own exception passes through a hook and is no hook failure", async () => {
      const store = new AsyncLocalStorage<readonly string[]>();
      const toolset: Toolset = {
        tools: whoAmI.tools,
        handle: () => {
          throw new Error('the tool broke');
        },
      };
      const result = await step({ ...base, provider: new MockChatProvider([toolCall('c1', 'who', '{}')]), toolset, onHookError, hooks: [scopeHooks(store)] });
      const [only] = await result.toolResults();
      expect(only!.returnValue.isError).to.equal(true);
      expect(only!.returnValue.message).to.contain('the tool broke');
      expect(hookErrors).to.deep.equal([]);
    });
  });
});
