import {
  ChatProvider,
  HookErrorSink,
  Kernel,
  KernelError,
  KernelOptions,
  PluginError,
  StepHooks,
  StepRunner,
  TenantId,
  Toolset,
  definePlugin,
  textPart,
  toolOk,
  type HookErrorReport,
  type StepEndEvent,
  type StepStartEvent,
  type ToolCall,
  type ToolResult,
} from '@kosong/core';
import type { PluginFailure } from '@kosong/core/kernel';
import { MockChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';
import { inject, injectable, multiInject, named, optional, postConstruct } from 'inversify';
import sinon from 'sinon';
import { base, call, fakeProvider, outputOf, rejectionOf, spyToolset } from './support.js';

const Clock = Symbol('Clock');
interface Clock {
  now(): number;
}
const UsageStore = Symbol('UsageStore');
interface UsageStore {
  add(tenant: string | undefined, stepId: string, at: number): void;
}

/** The example: a hooks class with two injected dependencies. */
@injectable()
class UsageMeter implements StepHooks {
  constructor(
    @inject(Clock) private readonly clock: Clock,
    @inject(UsageStore) private readonly store: UsageStore,
  ) {}

  onStepEnd(event: StepEndEvent): void {
    this.store.add(event.tenant, event.stepId, this.clock.now());
  }
}

/** Asserts `error` is a PluginError about `plugin` for `reason`, and returns its message. */
function pluginErrorMessage(error: unknown, plugin: string, reason: PluginFailure): string {
  expect(PluginError.isInstance(error), `expected a PluginError, got ${String(error)}`).to.equal(true);
  expect(error).to.include({ plugin, reason });
  expect((error as Error).message).to.include(`"${plugin}"`);
  return (error as Error).message;
}

const mockPlugin = (provider: ChatProvider = new MockChatProvider([textPart('ok')])) =>
  definePlugin({ name: 'mock', setup: (ctx) => ctx.bindChatProvider('mock', provider) });

describe('kernel: class-based services', () => {
  let kernel: Kernel;
  beforeEach(() => {
    kernel = new Kernel({ hookTimeoutMs: 500 });
  });
  afterEach(async () => {
    sinon.restore();
    await kernel.dispose();
  });

  describe('binding classes with the helpers', () => {
    it('a hooks class gets its dependencies injected and sees every step (the issue example)', async () => {
      const add = sinon.spy();
      const store: UsageStore = { add };
      await kernel.use(
        mockPlugin(),
        definePlugin({
          name: 'metering',
          setup(ctx) {
            ctx.bind<Clock>(Clock).toConstantValue({ now: () => 42 });
            ctx.bind<UsageStore>(UsageStore).toConstantValue(store);
            ctx.bindHooks(UsageMeter);
          },
        }),
      );
      kernel.tenants.define('acme');
      const plain = await kernel.runner().step(base);
      const acme = await kernel.runner({ tenant: 'acme' }).step(base);
      expect(add.args).to.deep.equal([
        [undefined, plain.stepId, 42],
        ['acme', acme.stepId, 42],
      ]);
    });

    it('a provider, a toolset and a hook-error sink can be classes too, each resolved with its dependencies', async () => {
      const Greeting = Symbol('Greeting');
      const reports: HookErrorReport[] = [];
      @injectable()
      class GreetingProvider extends MockChatProvider {
        constructor(@inject(Greeting) greeting: string) {
          super([textPart(greeting), call('a')], { modelName: 'greeting' });
        }
      }
      @injectable()
      class EchoTools implements Toolset {
        readonly tools = [{ name: 'fake', description: 'echoes', parameters: { type: 'object' } }];
        constructor(@inject(Greeting) private readonly greeting: string) {}
        handle(c: ToolCall): ToolResult {
          return { toolCallId: c.id, returnValue: toolOk({ output: `${this.greeting}:${c.id}` }) };
        }
      }
      @injectable()
      class CollectingSink implements HookErrorSink {
        report(report: HookErrorReport): void {
          reports.push(report);
        }
      }
      await kernel.use(
        definePlugin({
          name: 'classes',
          setup(ctx) {
            ctx.bind(Greeting).toConstantValue('hello');
            ctx.bindChatProvider('greeting', GreetingProvider);
            ctx.bindToolset(EchoTools);
            ctx.bindHookErrorSink(CollectingSink);
          },
        }),
        definePlugin({
          name: 'failing',
          setup: (ctx) =>
            ctx.bindHooks({
              onStepStart: () => {
                throw new Error('nope');
              },
            }),
        }),
      );
      const result = await kernel.runner().step(base);
      expect(result.message.content).to.deep.equal([textPart('hello')]);
      expect((await result.toolResults()).map(outputOf)).to.deep.equal(['hello:a']);
      expect(reports.map((r) => [r.plugin, r.hook])).to.deep.equal([['failing', 'onStepStart']]);
      expect(kernel.runner().provider).to.be.instanceOf(GreetingProvider);
      expect(kernel.container.get(Toolset)).to.be.instanceOf(EchoTools);
      expect(kernel.container.get(ChatProvider, { name: 'greeting' })).to.equal(kernel.runner().provider);
    });

    it('reports a failure of a class-bound hook under its plugin\'s name', async () => {
      const reports: HookErrorReport[] = [];
      @injectable()
      class Failing implements StepHooks {
        onStepStart(): void {
          throw new Error('class hook failed');
        }
      }
      await kernel.use(
        mockPlugin(),
        definePlugin({ name: 'sink', setup: (ctx) => ctx.bindHookErrorSink({ report: (r) => void reports.push(r) }) }),
        definePlugin({ name: 'telemetry', setup: (ctx) => ctx.bindHooks(Failing) }),
      );
      const result = await kernel.runner().step(base);
      expect(reports.map((r) => [r.plugin, r.hook, r.stepId, (r.error as Error).message])).to.deep.equal([
        ['telemetry', 'onStepStart', result.stepId, 'class hook failed'],
      ]);
    });

    it('hook methods of a class are called on the instance, in registration order with object hooks', async () => {
      const order: string[] = [];
      @injectable()
      class Recorder implements StepHooks {
        readonly label = 'class';
        onStepStart(): void {
          order.push(this.label);
        }
      }
      await kernel.use(
        mockPlugin(),
        definePlugin({ name: 'first', setup: (ctx) => ctx.bindHooks({ onStepStart: () => void order.push('object 1') }) }),
        definePlugin({ name: 'second', setup: (ctx) => ctx.bindHooks(Recorder) }),
        definePlugin({ name: 'third', setup: (ctx) => ctx.bindHooks({ onStepStart: () => void order.push('object 2') }) }),
      );
      await kernel.runner().step(base);
      expect(order).to.deep.equal(['object 1', 'class', 'object 2']);
    });

    it('@postConstruct runs once, when the plugin is used; every step and scope without bindings share the instance', async () => {
      const constructed = sinon.spy();
      const initialised = sinon.spy();
      const seen = new Set<object>();
      @injectable()
      class Counted implements StepHooks {
        constructor() {
          constructed();
        }
        @postConstruct()
        init(): void {
          initialised(this);
        }
        onStepStart(): void {
          seen.add(this);
        }
      }
      await kernel.use(mockPlugin(), definePlugin({ name: 'counted', setup: (ctx) => ctx.bindHooks(Counted) }));
      sinon.assert.calledOnce(constructed);
      sinon.assert.calledOnce(initialised);
      kernel.tenants.define('plain');
      await Promise.all([...Array.from({ length: 5 }, () => kernel.runner().step(base)), kernel.runner({ tenant: 'plain' }).step(base)]);
      await kernel.use(definePlugin({ name: 'later', setup: (ctx) => ctx.bindHooks({}) }));
      await kernel.runner().step(base);
      sinon.assert.calledOnce(constructed);
      expect(seen.size).to.equal(1);
      expect([...seen][0]).to.equal(initialised.firstCall.args[0]);
    });

    it('the same class bound by two plugins gives two instances, each reported under its own plugin', async () => {
      const reports: HookErrorReport[] = [];
      @injectable()
      class Failing implements StepHooks {
        onStepEnd(): void {
          throw new Error('x');
        }
      }
      await kernel.use(
        mockPlugin(),
        definePlugin({ name: 'sink', setup: (ctx) => ctx.bindHookErrorSink({ report: (r) => void reports.push(r) }) }),
        definePlugin({ name: 'one', setup: (ctx) => ctx.bindHooks(Failing) }),
        definePlugin({ name: 'two', setup: (ctx) => ctx.bindHooks(Failing) }),
      );
      await kernel.runner().step(base);
      expect(reports.map((r) => r.plugin)).to.deep.equal(['one', 'two']);
      const [a, b] = kernel.container.getAll(StepHooks);
      expect(a).to.be.instanceOf(Failing);
      expect(a).to.not.equal(b);
    });

    it('a provider factory is still a factory; a class is not called as one', async () => {
      const provider = fakeProvider('made');
      const factory = sinon.spy(() => provider);
      await kernel.use(definePlugin({ name: 'factory', setup: (ctx) => ctx.bindChatProvider('made', factory) }));
      sinon.assert.notCalled(factory);
      expect(kernel.runner().provider).to.equal(provider);
      sinon.assert.calledOnce(factory);
    });
  });

  describe('what a service may inject', () => {
    it('the kernel options, the tenant id (undefined in the kernel scope), named and default providers, toolset, hooks and sink', async () => {
      const options = { hookTimeoutMs: 321, dispatch: 'deferred' as const };
      const injectingKernel = new Kernel(options);
      const provider = fakeProvider('main');
      const other = fakeProvider('other');
      const toolset = spyToolset('global');
      const hooks = { onStepStart() {} };
      const sink = { report() {} };
      const seen: Record<string, unknown> = {};
      @injectable()
      class Inspector {
        constructor(
          @inject(KernelOptions) kernelOptions: KernelOptions,
          @inject(TenantId) tenant: TenantId,
          @inject(ChatProvider) @named('other') named: ChatProvider,
          @inject(ChatProvider) defaultProvider: ChatProvider,
          @inject(Toolset) injectedToolset: Toolset,
          @multiInject(StepHooks) allHooks: StepHooks[],
          @inject(HookErrorSink) injectedSink: HookErrorSink,
        ) {
          Object.assign(seen, { kernelOptions, tenant, named, defaultProvider, injectedToolset, allHooks, injectedSink });
        }
      }
      try {
        await injectingKernel.use(
          definePlugin({
            name: 'base',
            setup(ctx) {
              ctx.bindChatProvider('main', provider);
              ctx.bindChatProvider('other', other);
              ctx.bindToolset(toolset);
              ctx.bindHooks(hooks);
              ctx.bindHookErrorSink(sink);
            },
          }),
        );
        // (A hooks class injecting every StepHooks would inject itself: a cycle. A plain service does not.)
        await injectingKernel.use(definePlugin({ name: 'inspector', setup: (ctx) => void ctx.bind(Inspector).toSelf() }));
        injectingKernel.container.get(Inspector);
        expect(seen).to.deep.equal({
          kernelOptions: options,
          tenant: undefined,
          named: other,
          defaultProvider: provider,
          injectedToolset: toolset,
          allHooks: [hooks],
          injectedSink: sink,
        });
      } finally {
        await injectingKernel.dispose();
      }
    });

    it('a service can inject StepRunner and run steps of its own scope (a summariser calling the model)', async () => {
      const summaries: string[] = [];
      @injectable()
      class Summariser {
        constructor(@inject(StepRunner) private readonly runner: StepRunner) {}
        async summarise(text: string): Promise<string> {
          const result = await this.runner.step({ systemPrompt: 'Summarise.', history: [{ role: 'user', content: [textPart(text)] }] });
          const summary = result.message.content.map((p) => (p.type === 'text' ? p.text : '')).join('');
          summaries.push(`${this.runner.tenant ?? '-'}:${summary}`);
          return summary;
        }
      }
      const SummariserId = Symbol('Summariser');
      await kernel.use(
        mockPlugin(new MockChatProvider([textPart('kernel summary')])),
        definePlugin({
          name: 'summaries',
          setup(ctx) {
            ctx.bind(SummariserId).to(Summariser).inSingletonScope();
          },
        }),
      );
      const kernelSummariser = kernel.container.get<Summariser>(SummariserId);
      expect(await kernelSummariser.summarise('long text')).to.equal('kernel summary');
      expect(summaries).to.deep.equal(['-:kernel summary']);
    });

    it('a class asking for something unbound that is @optional gets undefined', async () => {
      const Missing = Symbol('Missing');
      let got: unknown = 'not called';
      @injectable()
      class Tolerant implements StepHooks {
        constructor(@inject(Missing) @optional() value: unknown) {
          got = value;
        }
      }
      await kernel.use(definePlugin({ name: 'tolerant', setup: (ctx) => ctx.bindHooks(Tolerant) }));
      expect(got).to.equal(undefined);
    });
  });

  describe('a class that cannot be created is refused when the plugin is used', () => {
    const expectUntouched = async (error: unknown): Promise<void> => {
      expect(KernelError.isInstance(error)).to.equal(true);
      expect(kernel.plugins()).to.deep.equal(['mock']);
      expect(kernel.container.getAll(StepHooks)).to.deep.equal([]);
      const result = await kernel.runner().step(base); // and the kernel still runs steps
      expect(result.message.content).to.deep.equal([textPart('ok')]);
    };

    beforeEach(() => kernel.use(mockPlugin()));

    it('a class without @injectable (even with decorated constructor parameters, which inversify would accept)', async () => {
      class Plain implements StepHooks {
        onStepStart(): void {}
      }
      class DecoratedParameters implements StepHooks {
        constructor(@inject(Clock) readonly clock: Clock) {}
        onStepStart(): void {}
      }
      const setup = sinon.spy();
      for (const type of [Plain, DecoratedParameters]) {
        const error = await rejectionOf(kernel.use(definePlugin({ name: 'bad', setup: (ctx) => ctx.bindHooks(type) }), definePlugin({ name: 'fine', setup })));
        expect(pluginErrorMessage(error, 'bad', 'not-injectable')).to.include(type.name).and.include('@injectable');
        await expectUntouched(error);
      }
    });

    it('a function that is not a class, for hooks, a toolset or a sink', async () => {
      const notAClass = (): StepHooks => ({});
      for (const setup of [
        (ctx: Parameters<Parameters<typeof definePlugin>[0]['setup']>[0]) => ctx.bindHooks(notAClass as unknown as StepHooks),
        (ctx: Parameters<Parameters<typeof definePlugin>[0]['setup']>[0]) => ctx.bindToolset(notAClass as unknown as Toolset),
        (ctx: Parameters<Parameters<typeof definePlugin>[0]['setup']>[0]) => ctx.bindHookErrorSink(notAClass as unknown as HookErrorSink),
      ]) {
        const error = await rejectionOf(kernel.use(definePlugin({ name: 'bad', setup })));
        pluginErrorMessage(error, 'bad', 'invalid');
        await expectUntouched(error);
      }
    });

    it('an unbound dependency, deep in the chain: the message names the plugin and every service on the way', async () => {
      const Missing = Symbol('Missing');
      @injectable()
      class Leaf {
        constructor(@inject(Missing) readonly missing: unknown) {}
      }
      @injectable()
      class Middle {
        constructor(@inject(Leaf) readonly leaf: Leaf) {}
      }
      @injectable()
      class Meter implements StepHooks {
        constructor(@inject(Middle) readonly middle: Middle) {}
        onStepStart(): void {}
      }
      const error = await rejectionOf(
        kernel.use(
          definePlugin({
            name: 'metering',
            setup(ctx) {
              ctx.bind(Middle).toSelf();
              ctx.bind(Leaf).toSelf();
              ctx.bindHooks(Meter);
            },
          }),
        ),
      );
      const message = pluginErrorMessage(error, 'metering', 'unbound-dependency');
      expect(message).to.include('hooks Meter → Middle → Leaf → Symbol(Missing)');
      await expectUntouched(error);
    });

    it('an unbound direct dependency, and a named one', async () => {
      @injectable()
      class NeedsClock implements StepHooks {
        constructor(@inject(Clock) readonly clock: Clock) {}
        onStepStart(): void {}
      }
      @injectable()
      class NeedsNamedProvider implements StepHooks {
        constructor(@inject(ChatProvider) @named('absent') readonly provider: ChatProvider) {}
        onStepStart(): void {}
      }
      const direct = await rejectionOf(kernel.use(definePlugin({ name: 'clocked', setup: (ctx) => ctx.bindHooks(NeedsClock) })));
      expect(pluginErrorMessage(direct, 'clocked', 'unbound-dependency')).to.include('hooks NeedsClock → Symbol(Clock)');
      const namedError = await rejectionOf(kernel.use(definePlugin({ name: 'named', setup: (ctx) => ctx.bindHooks(NeedsNamedProvider) })));
      expect(pluginErrorMessage(namedError, 'named', 'unbound-dependency')).to.include('named "absent"');
      await expectUntouched(namedError);
    });

    it('a dependency cycle between classes, and one between contributions', async () => {
      @injectable()
      class Chicken {
        constructor(@inject('Egg') readonly egg: unknown) {}
      }
      @injectable()
      class Egg {
        constructor(@inject('Chicken') readonly chicken: unknown) {}
      }
      @injectable()
      class Farm implements StepHooks {
        constructor(@inject('Chicken') readonly chicken: unknown) {}
        onStepStart(): void {}
      }
      const classes = await rejectionOf(
        kernel.use(
          definePlugin({
            name: 'farm',
            setup(ctx) {
              ctx.bind('Chicken').to(Chicken);
              ctx.bind('Egg').to(Egg);
              ctx.bindHooks(Farm);
            },
          }),
        ),
      );
      expect(pluginErrorMessage(classes, 'farm', 'circular-dependency')).to.include('Chicken → Egg → Chicken');
      await expectUntouched(classes);

      // A toolset class that injects the hooks, whose class injects the toolset.
      @injectable()
      class LoopTools implements Toolset {
        readonly tools = [];
        constructor(@multiInject(StepHooks) readonly hooks: StepHooks[]) {}
        handle(c: ToolCall): ToolResult {
          return { toolCallId: c.id, returnValue: toolOk({ output: '' }) };
        }
      }
      @injectable()
      class LoopHooks implements StepHooks {
        constructor(@inject(Toolset) readonly toolset: Toolset) {}
        onStepStart(): void {}
      }
      const contributions = await rejectionOf(
        kernel.use(
          definePlugin({
            name: 'loop',
            setup(ctx) {
              ctx.bindToolset(LoopTools);
              ctx.bindHooks(LoopHooks);
            },
          }),
        ),
      );
      expect(pluginErrorMessage(contributions, 'loop', 'circular-dependency')).to.include('toolset LoopTools → hooks LoopHooks → toolset LoopTools');
      await expectUntouched(contributions);
    });

    it('a constructor or @postConstruct that throws; an async @postConstruct', async () => {
      const boom = new Error('cannot start');
      @injectable()
      class Throws implements StepHooks {
        constructor() {
          throw boom;
        }
      }
      @injectable()
      class InitThrows implements StepHooks {
        onStepStart(): void {}
        @postConstruct()
        init(): void {
          throw boom;
        }
      }
      @injectable()
      class AsyncInit implements StepHooks {
        onStepStart(): void {}
        @postConstruct()
        async init(): Promise<void> {
          await Promise.resolve();
        }
      }
      for (const type of [Throws, InitThrows]) {
        const error = await rejectionOf(kernel.use(definePlugin({ name: 'throws', setup: (ctx) => ctx.bindHooks(type) })));
        expect(pluginErrorMessage(error, 'throws', 'resolution-failed')).to.include(`hooks ${type.name}`).and.include('cannot start');
        expect((error as Error).cause).to.equal(boom);
        await expectUntouched(error);
      }
      const error = await rejectionOf(kernel.use(definePlugin({ name: 'async', setup: (ctx) => ctx.bindHooks(AsyncInit) })));
      expect(pluginErrorMessage(error, 'async', 'resolution-failed')).to.include('synchronously');
      await expectUntouched(error);
    });

    it('the plugins of the same call are undone with the failing one, whatever their order', async () => {
      const Missing = Symbol('Missing');
      @injectable()
      class Broken implements StepHooks {
        constructor(@inject(Missing) readonly missing: unknown) {}
        onStepStart(): void {}
      }
      const disposed = sinon.spy();
      const good = definePlugin({
        name: 'good',
        setup(ctx) {
          ctx.bindHooks(UsageMeter);
          ctx.bind(Clock).toConstantValue({ now: () => 1 });
          ctx.bind(UsageStore).toConstantValue({ add() {} });
          ctx.onDispose(disposed);
        },
      });
      const error = await rejectionOf(kernel.use(good, definePlugin({ name: 'broken', setup: (ctx) => ctx.bindHooks(Broken) })));
      pluginErrorMessage(error, 'broken', 'unbound-dependency');
      sinon.assert.calledOnce(disposed);
      await expectUntouched(error);
      expect(kernel.container.isBound(Clock)).to.equal(false);
    });
  });

  describe('what steps resolve is cached per scope', () => {
    it('class-bound hooks are resolved once, not per step; a later use is seen by the next step', async () => {
      const getAll = sinon.spy(kernel.container, 'getAll');
      const starts: StepStartEvent[] = [];
      @injectable()
      class Recorder implements StepHooks {
        onStepStart(event: StepStartEvent): void {
          starts.push(event);
        }
      }
      await kernel.use(mockPlugin(), definePlugin({ name: 'recorder', setup: (ctx) => ctx.bindHooks(Recorder) }));
      const runner = kernel.runner();
      await Promise.all(Array.from({ length: 10 }, () => runner.step(base)));
      const lookups = getAll.callCount;
      await Promise.all(Array.from({ length: 10 }, () => runner.step(base)));
      expect(getAll.callCount, 'container lookups for 10 more steps').to.equal(lookups);
      expect(starts).to.have.length(20);

      const late = sinon.spy();
      await kernel.use(definePlugin({ name: 'late', setup: (ctx) => ctx.bindHooks({ onStepStart: late }) }));
      await runner.step(base);
      sinon.assert.calledOnce(late);
      expect(starts).to.have.length(21);
    });
  });
});
