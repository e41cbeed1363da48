import {
  ChatProvider as ChatProviderId,
  Kernel,
  KernelError,
  PluginError,
  StepRunner,
  TenantId,
  definePlugin,
  textPart,
  toolOk,
  type ChatProvider,
  type Message,
  type StepHooks,
  type StepStartEvent,
  type StreamedMessage,
  type TenantModuleContext,
  type ToolCall,
  type ToolResult,
  type Toolset,
} from '@kosong/core';
import { MockChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';
import { inject, injectable, named, postConstruct } from 'inversify';
import sinon from 'sinon';
import { base, call, outputOf, rejectionOf, spyToolset } from './support.js';

const ApiKey = Symbol('ApiKey');

/** A provider whose replies say which key it was created with. */
@injectable()
class KeyedProvider implements ChatProvider {
  static readonly created: KeyedProvider[] = [];
  readonly name = 'keyed';
  readonly modelName = 'keyed-model';
  readonly thinkingEffort = undefined;
  readonly generation = {};
  readonly #inner: MockChatProvider;
  constructor(@inject(ApiKey) readonly apiKey: string) {
    this.#inner = new MockChatProvider([textPart(`key ${apiKey}`)]);
  }
  @postConstruct()
  registered(): void {
    KeyedProvider.created.push(this);
  }
  generate(systemPrompt: string, tools: Parameters<ChatProvider['generate']>[1], history: readonly Message[], options?: Parameters<ChatProvider['generate']>[3]): Promise<StreamedMessage> {
    return this.#inner.generate(systemPrompt, tools, history, options);
  }
  withThinking(): ChatProvider {
    return this;
  }
  withGeneration(): ChatProvider {
    return this;
  }
}

const textOf = (message: Message): string => message.content.map((p) => (p.type === 'text' ? p.text : '')).join('');

describe('kernel: tenant-scoped services', () => {
  let kernel: Kernel;
  beforeEach(async () => {
    KeyedProvider.created.length = 0;
    kernel = new Kernel();
    await kernel.use(
      definePlugin({
        name: 'keyed',
        setup(ctx) {
          ctx.bind(ApiKey).toConstantValue('kernel-key');
          ctx.bindChatProvider('keyed', KeyedProvider);
        },
      }),
    );
  });
  afterEach(async () => {
    sinon.restore();
    await kernel.dispose();
  });

  describe('a tenant module', () => {
    it('binds the tenant\'s own dependencies: a class-bound provider resolved for the tenant gets them', async () => {
      kernel.tenants.define('acme', { module: (ctx) => ctx.bind(ApiKey).toConstantValue('acme-key') });
      kernel.tenants.define('globex', { module: (ctx) => ctx.bind(ApiKey).toConstantValue('globex-key') });
      kernel.tenants.define('plain');
      const text = async (tenant?: string): Promise<string> => textOf((await kernel.runner(tenant === undefined ? {} : { tenant }).step(base)).message);
      expect(await text('acme')).to.equal('key acme-key');
      expect(await text('globex')).to.equal('key globex-key');
      expect(await text('plain')).to.equal('key kernel-key');
      expect(await text()).to.equal('key kernel-key');
      // A tenant without bindings of its own shares the kernel's instance.
      expect(kernel.runner({ tenant: 'plain' }).provider).to.equal(kernel.runner().provider);
      expect(KeyedProvider.created.map((p) => p.apiKey)).to.deep.equal(['kernel-key', 'acme-key', 'globex-key']);
    });

    it('is given the tenant id; an arrow returning its binding is fine (inversify would call that an async module)', () => {
      const seen: string[] = [];
      kernel.tenants.define('acme', {
        module: (ctx) => {
          seen.push(ctx.tenant);
          return ctx.bind(ApiKey).toConstantValue('acme-key');
        },
      });
      expect(seen).to.deep.equal(['acme']);
      expect(kernel.runner({ tenant: 'acme' }).provider).to.have.property('apiKey', 'acme-key');
    });

    it('a module that throws, or returns a promise, fails define with a KernelError naming the tenant', async () => {
      const boom = new Error('no key in the vault');
      const thrown = await rejectionOf(() =>
        kernel.tenants.define('acme', {
          module: () => {
            throw boom;
          },
        }),
      );
      expect(KernelError.isInstance(thrown)).to.equal(true);
      expect((thrown as Error).message).to.include('"acme"').and.include('no key in the vault');
      expect((thrown as Error).cause).to.equal(boom);
      const asynchronous = await rejectionOf(() =>
        kernel.tenants.define('globex', {
          module: (async (ctx: TenantModuleContext) => {
            await Promise.resolve();
            ctx.bind(ApiKey).toConstantValue('late');
            throw new Error('and then it failed');
          }) as unknown as (ctx: TenantModuleContext) => void,
        }),
      );
      expect(KernelError.isInstance(asynchronous)).to.equal(true);
      expect((asynchronous as Error).message).to.include('"globex"').and.include('synchronously');
      expect(kernel.tenants.list()).to.deep.equal([]);
      await new Promise((resolve) => setImmediate(resolve)); // its rejection, had it been unhandled, would fail this test
    });

    it('the tenant\'s instance is created once (when the tenant is defined), whatever the number of concurrent steps', async () => {
      kernel.tenants.define('acme', { module: (ctx) => void ctx.bind(ApiKey).toConstantValue('acme-key') });
      expect(KeyedProvider.created.map((p) => p.apiKey)).to.deep.equal(['kernel-key', 'acme-key']);
      const results = await Promise.all(Array.from({ length: 50 }, (_, i) => kernel.runner(i % 2 ? { tenant: 'acme' } : {}).step(base)));
      expect(results.map((r) => textOf(r.message))).to.deep.equal(Array.from({ length: 50 }, (_, i) => (i % 2 ? 'key acme-key' : 'key kernel-key')));
      expect(KeyedProvider.created).to.have.length(2);
    });

    it('a tenant defined again after removal gets a new instance', async () => {
      kernel.tenants.define('acme', { module: (ctx) => void ctx.bind(ApiKey).toConstantValue('v1') });
      const first = kernel.runner({ tenant: 'acme' }).provider;
      await kernel.tenants.remove('acme');
      kernel.tenants.define('acme', { module: (ctx) => void ctx.bind(ApiKey).toConstantValue('v2') });
      const second = kernel.runner({ tenant: 'acme' }).provider;
      expect(second).to.not.equal(first);
      expect(textOf((await kernel.runner({ tenant: 'acme' }).step(base)).message)).to.equal('key v2');
    });

    it('a dependency the tenant binds badly fails define with a PluginError naming the plugin and the tenant', async () => {
      const vaultLocked = new Error('vault locked');
      const error = await rejectionOf(() =>
        kernel.tenants.define('acme', {
          module: (ctx) =>
            void ctx.bind(ApiKey).toDynamicValue(() => {
              throw vaultLocked;
            }),
        }),
      );
      expect(PluginError.isInstance(error)).to.equal(true);
      expect(error).to.include({ plugin: 'keyed', reason: 'resolution-failed' });
      expect((error as Error).message).to.include('"acme"').and.include('chat provider "keyed" (KeyedProvider)').and.include('vault locked');
      expect(kernel.tenants.has('acme')).to.equal(false);

      const Missing = Symbol('Missing');
      @injectable()
      class FromVault {
        constructor(@inject(Missing) readonly missing: string) {}
        toString(): string {
          return 'secret';
        }
      }
      const unbound = await rejectionOf(() => kernel.tenants.define('globex', { module: (ctx) => void ctx.bind(ApiKey).to(FromVault) }));
      expect(unbound).to.include({ plugin: 'keyed', reason: 'unbound-dependency' });
      expect((unbound as Error).message).to.include('"globex"').and.include('Symbol(Missing)');
      expect(kernel.tenants.list()).to.deep.equal([]);
    });

    it('a plugin used after a tenant was defined is checked in that tenant too: a failure undoes the use', async () => {
      const Quota = Symbol('Quota');
      @injectable()
      class QuotaHooks implements StepHooks {
        constructor(@inject(Quota) readonly quota: number) {}
        onStepStart(): void {}
      }
      kernel.tenants.define('acme', {
        module: (ctx) =>
          void ctx.bind(Quota).toDynamicValue(() => {
            throw new Error('no quota for acme');
          }),
      });
      const error = await rejectionOf(
        kernel.use(
          definePlugin({
            name: 'quota',
            setup(ctx) {
              ctx.bind(Quota).toConstantValue(10);
              ctx.bindHooks(QuotaHooks);
            },
          }),
        ),
      );
      expect(error).to.include({ plugin: 'quota', reason: 'resolution-failed' });
      expect((error as Error).message).to.include('"acme"').and.include('no quota for acme');
      expect(kernel.plugins()).to.deep.equal(['keyed']);
      await kernel.runner({ tenant: 'acme' }).step(base);
    });
  });

  describe('services that differ between tenants', () => {
    it('a class that injects the tenant id is created once per tenant, module or not; the kernel\'s gets undefined', async () => {
      const instances = new Map<string | undefined, TenantAware[]>();
      @injectable()
      class TenantAware implements StepHooks {
        constructor(@inject(TenantId) readonly tenant: TenantId) {
          instances.set(tenant, [...(instances.get(tenant) ?? []), this]);
        }
        onStepStart(event: StepStartEvent): void {
          expect(event.tenant, 'the hooks of one tenant see only its steps').to.equal(this.tenant);
        }
      }
      await kernel.use(definePlugin({ name: 'aware', setup: (ctx) => ctx.bindHooks(TenantAware) }));
      kernel.tenants.define('acme');
      kernel.tenants.define('globex', { module: (ctx) => void ctx.bind(ApiKey).toConstantValue('globex-key') });
      await Promise.all(['acme', 'globex', undefined, 'acme', 'globex', undefined].map((tenant) => kernel.runner(tenant === undefined ? {} : { tenant }).step(base)));
      expect([...instances.keys()].sort()).to.deep.equal(['acme', 'globex', undefined].sort());
      for (const list of instances.values()) expect(list).to.have.length(1);
    });

    it('a service that injects StepRunner runs steps in its tenant\'s scope: its provider and toolset', async () => {
      const byTenant = new Map<TenantId, Summariser>();
      @injectable()
      class Summariser implements StepHooks {
        constructor(@inject(StepRunner) readonly runner: StepRunner) {}
        onStepStart(event: StepStartEvent): void {
          byTenant.set(event.tenant, this);
        }
      }
      await kernel.use(definePlugin({ name: 'summaries', setup: (ctx) => ctx.bindHooks(Summariser) }));
      const acmeTools = spyToolset('acme');
      kernel.tenants.define('acme', { toolset: acmeTools, provider: new MockChatProvider([textPart('acme says'), call('x')]) });
      await kernel.runner({ tenant: 'acme' }).step(base);
      await kernel.runner().step(base);
      const acme = byTenant.get('acme')!;
      expect(acme.runner.tenant).to.equal('acme');
      expect(byTenant.get(undefined)!.runner.tenant).to.equal(undefined);
      const own = await acme.runner.step(base);
      expect(textOf(own.message)).to.equal('acme says');
      expect((await own.toolResults()).map(outputOf)).to.deep.equal(['acme:x']);
    });

    it('a class-bound toolset resolved for a tenant gets the tenant\'s key; setToolset still overrides it', async () => {
      @injectable()
      class KeyedTools implements Toolset {
        readonly tools = [{ name: 'fake', description: 'keyed', parameters: { type: 'object' } }];
        constructor(@inject(ApiKey) private readonly key: string) {}
        handle(c: ToolCall): ToolResult {
          return { toolCallId: c.id, returnValue: toolOk({ output: `${this.key}:${c.id}` }) };
        }
      }
      await kernel.use(
        definePlugin({ name: 'calls', setup: (ctx) => ctx.bindChatProvider('calls', new MockChatProvider([call('a')]), { default: true }) }),
        definePlugin({ name: 'tools', setup: (ctx) => ctx.bindToolset(KeyedTools) }),
      );
      kernel.tenants.define('acme', { module: (ctx) => void ctx.bind(ApiKey).toConstantValue('acme-key') });
      const outputs = async (tenant?: string): Promise<unknown[]> =>
        (await (await kernel.runner(tenant === undefined ? {} : { tenant }).step(base)).toolResults()).map(outputOf);
      expect(await outputs('acme')).to.deep.equal(['acme-key:a']);
      expect(await outputs()).to.deep.equal(['kernel-key:a']);
      kernel.tenants.setToolset('acme', spyToolset('swapped'));
      expect(await outputs('acme')).to.deep.equal(['swapped:a']);
    });

    it('a provider a tenant names resolves in the tenant\'s scope', async () => {
      kernel.tenants.define('acme', { provider: 'keyed', module: (ctx) => void ctx.bind(ApiKey).toConstantValue('acme-key') });
      expect(textOf((await kernel.runner({ tenant: 'acme' }).step(base)).message)).to.equal('key acme-key');
      expect(textOf((await kernel.runner({ tenant: 'acme', provider: 'keyed' }).step(base)).message)).to.equal('key acme-key');
    });
  });

  describe('tenant-only services', () => {
    @injectable()
    class TenantCounter implements StepHooks {
      static readonly seen: [string | undefined, string | undefined][] = [];
      constructor(@inject(ApiKey) private readonly key: string) {}
      onStepStart(event: StepStartEvent): void {
        TenantCounter.seen.push([event.tenant, this.key]);
      }
    }
    beforeEach(() => {
      TenantCounter.seen.length = 0;
    });

    it('tenant-only hooks run for tenant steps only, with the tenant\'s dependencies; the kernel has no instance', async () => {
      const reports: string[] = [];
      @injectable()
      class TenantSink {
        constructor(@inject(ApiKey) private readonly key: string) {}
        report(): void {
          reports.push(this.key);
        }
      }
      await kernel.use(
        definePlugin({
          name: 'counting',
          setup(ctx) {
            ctx.bindHooks(TenantCounter, { tenantOnly: true });
            ctx.bindHookErrorSink(TenantSink, { tenantOnly: true });
            ctx.bindHooks({
              onStepEnd: () => {
                throw new Error('report me');
              },
            });
          },
        }),
      );
      kernel.tenants.define('acme', { module: (ctx) => void ctx.bind(ApiKey).toConstantValue('acme-key') });
      kernel.tenants.define('plain');
      const stderr = sinon.stub(process.stderr, 'write').returns(true);
      try {
        await kernel.runner().step(base);
        await kernel.runner({ tenant: 'acme' }).step(base);
        await kernel.runner({ tenant: 'plain' }).step(base);
      } finally {
        stderr.restore();
      }
      expect(TenantCounter.seen).to.deep.equal([
        ['acme', 'acme-key'],
        ['plain', 'kernel-key'],
      ]);
      expect(reports).to.deep.equal(['acme-key', 'kernel-key']);
      expect(stderr.callCount, 'the kernel step reports to stderr: the tenant-only sink is not its').to.equal(1);
    });

    it('a tenant-only service is checked in every tenant already defined when the plugin is used', async () => {
      const Region = Symbol('Region');
      @injectable()
      class Regional implements StepHooks {
        constructor(@inject(Region) readonly region: string) {}
        onStepStart(): void {}
      }
      kernel.tenants.define('eu', { module: (ctx) => void ctx.bind(Region).toConstantValue('eu-west') });
      kernel.tenants.define('nowhere');
      const error = await rejectionOf(kernel.use(definePlugin({ name: 'regional', setup: (ctx) => ctx.bindHooks(Regional, { tenantOnly: true }) })));
      expect(error).to.include({ plugin: 'regional', reason: 'unbound-dependency' });
      expect((error as Error).message).to.include('"nowhere"').and.include('hooks Regional → Symbol(Region)');
      expect(kernel.plugins()).to.deep.equal(['keyed']);
      await kernel.tenants.remove('nowhere');
      await kernel.use(definePlugin({ name: 'regional', setup: (ctx) => ctx.bindHooks(Regional, { tenantOnly: true }) }));
    });

    it('only a class can be tenant-only; a kernel-scope class cannot inject a tenant-only provider', async () => {
      const objectError = await rejectionOf(kernel.use(definePlugin({ name: 'object', setup: (ctx) => ctx.bindHooks({}, { tenantOnly: true }) })));
      expect(objectError).to.include({ plugin: 'object', reason: 'invalid' });
      @injectable()
      class UsesProvider implements StepHooks {
        constructor(@inject(ChatProviderId) @named('tenant-keyed') readonly provider: ChatProvider) {}
        onStepStart(): void {}
      }
      const error = await rejectionOf(
        kernel.use(
          definePlugin({
            name: 'mixed',
            setup(ctx) {
              ctx.bindChatProvider('tenant-keyed', KeyedProvider, { tenantOnly: true });
              ctx.bindHooks(UsesProvider);
            },
          }),
        ),
      );
      expect(error).to.include({ plugin: 'mixed', reason: 'resolution-failed' });
      expect((error as Error).message).to.include('tenants only');
    });
  });
});
