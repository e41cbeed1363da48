/**
 * Declared scopes of class-bound services (`{ scope: 'shared' | 'tenant' }`), the default decided from
 * what a class declares to inject, the scope-mismatch errors, and extension points opened by plugins.
 */
import { expect } from 'chai';
import {
  ExtensionPoint,
  Kernel,
  KernelError,
  PluginError,
  StepRunner,
  TenantId,
  UnknownTenantError,
  definePlugin,
  textPart,
  type ChatProvider,
  type Plugin,
  type PluginContext,
  type StepHooks,
  type StreamedMessage,
} from '../index.js';
import { inject, injectable, multiInject, named, type ServiceBindingOptions, type ServiceClass } from '../kernel/index.js';

const ApiKey = Symbol('ApiKey');
const Db = Symbol('Db');

/** A provider streaming one text part (what the kernel needs to resolve a step). */
function textProvider(name: string): ChatProvider {
  const stream = (): StreamedMessage => ({
    id: `${name}-msg`,
    usage: undefined,
    finishReason: 'stop',
    async *[Symbol.asyncIterator]() {
      yield textPart(`from ${name}`);
    },
  });
  const provider: ChatProvider = {
    name,
    modelName: `${name}-model`,
    thinkingEffort: undefined,
    generation: {},
    generate: () => Promise.resolve(stream()),
    withThinking: () => provider,
    withGeneration: () => provider,
  };
  return provider;
}

const providerPlugin = definePlugin({
  name: 'base',
  setup(ctx) {
    ctx.bind(ApiKey).toConstantValue('kernel-key');
    ctx.bindChatProvider('text', textProvider('text'));
  },
});

async function rejectionOf(run: Promise<unknown> | (() => unknown)): Promise<unknown> {
  try {
    await (typeof run === 'function' ? run() : run);
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

/** Records each instance of a class by the key it was created with. */
const created: string[] = [];

/** A database handle for the tenant it was created for (bound with the raw API: `bind(Db).to(TenantDb)`). */
@injectable()
class TenantDb {
  constructor(@inject(TenantId) readonly tenant: TenantId) {}
}

/** Hooks using the database of their tenant (created with a `Db`, whatever `Db` is bound to). */
@injectable()
class Audit implements StepHooks {
  constructor(@inject(Db) readonly db: { readonly tenant: TenantId }) {
    created.push(String(db.tenant));
  }
  onStepStart(): void {}
}

/** The plugin `audit`: binds `Db` as `bindDb` says, then `hooks` with `options`. */
function auditPlugin(bindDb: (ctx: PluginContext) => void, hooks: ServiceClass<StepHooks>, options?: ServiceBindingOptions): Plugin {
  return definePlugin({
    name: 'audit',
    setup(ctx) {
      bindDb(ctx);
      ctx.bindHooks(hooks, options);
    },
  });
}
const dbByClass = (ctx: PluginContext): void => void ctx.bind(Db).to(TenantDb);
const dbByDynamicValue = (ctx: PluginContext): void => void ctx.bind(Db).toDynamicValue((context) => ({ tenant: context.get<TenantId>(TenantId) }));

describe('kernel: declared scopes', () => {
  let kernel: Kernel;
  beforeEach(async () => {
    created.length = 0;
    kernel = new Kernel();
    await kernel.use(providerPlugin);
  });
  afterEach(async () => {
    await kernel.dispose();
  });

  const use = (plugin: Plugin): Promise<void> => kernel.use(plugin);
  const stepOf = (tenant?: string): Promise<unknown> => kernel.runner(tenant === undefined ? {} : { tenant }).step({ systemPrompt: 'test', history: [] });

  describe("{ scope: 'tenant' }", () => {
    it('is created once per scope, the kernel\'s and every tenant\'s (with bindings of its own or not), each with that scope\'s bindings', async () => {
      @injectable()
      class Keyed implements StepHooks {
        constructor(@inject(ApiKey) readonly key: string) {
          created.push(key);
        }
        onStepStart(): void {}
      }
      await use(definePlugin({ name: 'keyed', setup: (ctx) => ctx.bindHooks(Keyed, { scope: 'tenant' }) }));
      kernel.tenants.define('plain');
      kernel.tenants.define('bound', { module: (ctx) => void ctx.bind(ApiKey).toConstantValue('bound-key') });
      await Promise.all([stepOf(), stepOf('plain'), stepOf('bound'), stepOf('plain'), stepOf()]);
      // Nothing it injects differs per tenant, yet it is declared per tenant: the plain tenant gets its own (with the kernel's key).
      expect([...created].sort()).to.deep.equal(['bound-key', 'kernel-key', 'kernel-key']);
    });

    it('a tenant-only class may say so too; an object or a factory cannot be per tenant', async () => {
      @injectable()
      class Only implements StepHooks {
        constructor(@inject(TenantId) readonly tenant: TenantId) {
          created.push(String(tenant));
        }
        onStepStart(): void {}
      }
      await use(definePlugin({ name: 'only', setup: (ctx) => ctx.bindHooks(Only, { scope: 'tenant', tenantOnly: true }) }));
      kernel.tenants.define('acme');
      expect(created).to.deep.equal(['acme']);

      const object = await rejectionOf(use(definePlugin({ name: 'object', setup: (ctx) => ctx.bindHooks({}, { scope: 'tenant' }) })));
      expect(object).to.include({ plugin: 'object', reason: 'invalid' });
      expect((object as Error).message).to.include('only a class can be per tenant');
      const factory = await rejectionOf(use(definePlugin({ name: 'factory', setup: (ctx) => ctx.bindChatProvider('f', () => textProvider('f'), { scope: 'tenant' }) })));
      expect(factory).to.include({ plugin: 'factory', reason: 'invalid' });
      const both = await rejectionOf(use(definePlugin({ name: 'both', setup: (ctx) => ctx.bindHooks(Only, { scope: 'shared', tenantOnly: true }) })));
      expect(both).to.include({ plugin: 'both', reason: 'invalid' });
      expect((both as Error).message).to.include("cannot be declared { scope: 'shared' }");
      const odd = await rejectionOf(use(definePlugin({ name: 'odd', setup: (ctx) => ctx.bindHooks(Only, { scope: 'request' as never }) })));
      expect(odd).to.include({ plugin: 'odd', reason: 'invalid' });
      expect(kernel.plugins()).to.deep.equal(['base', 'only']);
    });
  });

  describe("{ scope: 'shared' }", () => {
    it('is created once, from the kernel\'s bindings, and handed to every tenant: a tenant\'s own bindings never reach it', async () => {
      const instances = new Set<object>();
      @injectable()
      class Keyed implements StepHooks {
        constructor(@inject(ApiKey) readonly key: string) {
          created.push(key);
        }
        onStepStart(): void {
          instances.add(this);
        }
      }
      await use(definePlugin({ name: 'keyed', setup: (ctx) => ctx.bindHooks(Keyed, { scope: 'shared' }) }));
      kernel.tenants.define('plain');
      kernel.tenants.define('bound', { module: (ctx) => void ctx.bind(ApiKey).toConstantValue('bound-key') });
      await Promise.all([stepOf(), stepOf('plain'), stepOf('bound')]);
      expect(created).to.deep.equal(['kernel-key']);
      expect(instances.size).to.equal(1);
    });

    it('injecting TenantId is refused when the plugin is used, naming the service and what differs per tenant', async () => {
      @injectable()
      class Meter implements StepHooks {
        constructor(@inject(TenantId) readonly tenant: TenantId) {}
        onStepStart(): void {}
      }
      const error = await rejectionOf(use(definePlugin({ name: 'meter', setup: (ctx) => ctx.bindHooks(Meter, { scope: 'shared' }) })));
      expect(PluginError.isInstance(error)).to.equal(true);
      expect(error).to.include({ plugin: 'meter', reason: 'scope-mismatch' });
      expect((error as Error).message).to.include("hooks Meter is declared { scope: 'shared' }").and.include('it injects TenantId, which differs per tenant').and.include("{ scope: 'tenant' }");
      expect(kernel.plugins()).to.deep.equal(['base']);
    });

    it('so is injecting StepRunner, Toolset or the default provider (but a named provider that is shared is fine)', async () => {
      for (const [id, label] of [
        [StepRunner, 'StepRunner'],
        [Symbol.for('kosong.Toolset'), 'Toolset'],
        [Symbol.for('kosong.ChatProvider'), 'ChatProvider (the default provider)'],
      ] as const) {
        @injectable()
        class Uses implements StepHooks {
          constructor(@inject(id) readonly value: unknown) {}
          onStepStart(): void {}
        }
        const error = await rejectionOf(use(definePlugin({ name: 'uses', setup: (ctx) => ctx.bindHooks(Uses, { scope: 'shared' }) })));
        expect(error, label).to.include({ plugin: 'uses', reason: 'scope-mismatch' });
        expect((error as Error).message, label).to.include(`it injects ${label}, which differs per tenant`);
      }
      @injectable()
      class UsesNamed implements StepHooks {
        constructor(@inject(Symbol.for('kosong.ChatProvider')) @named('text') readonly provider: ChatProvider) {}
        onStepStart(): void {}
      }
      await use(definePlugin({ name: 'named', setup: (ctx) => ctx.bindHooks(UsesNamed, { scope: 'shared' }) }));
    });

    it('depending on a service created per tenant, of another plugin, is refused naming both and the plugin of each', async () => {
      @injectable()
      class TenantProvider implements ChatProvider {
        readonly name = 'per-tenant';
        readonly modelName = 'm';
        readonly thinkingEffort = undefined;
        readonly generation = {};
        constructor(@inject(ApiKey) readonly key: string) {}
        generate(): Promise<StreamedMessage> {
          return textProvider('x').generate('', [], []);
        }
        withThinking(): ChatProvider {
          return this;
        }
        withGeneration(): ChatProvider {
          return this;
        }
      }
      @injectable()
      class Reporter implements StepHooks {
        constructor(@inject(Symbol.for('kosong.ChatProvider')) @named('per-tenant') readonly provider: ChatProvider) {}
        onStepStart(): void {}
      }
      await use(definePlugin({ name: 'providers', setup: (ctx) => ctx.bindChatProvider('per-tenant', TenantProvider, { scope: 'tenant' }) }));
      const error = await rejectionOf(use(definePlugin({ name: 'reporter', setup: (ctx) => ctx.bindHooks(Reporter, { scope: 'shared' }) })));
      expect(error).to.include({ plugin: 'reporter', reason: 'scope-mismatch' });
      expect((error as Error).message)
        .to.include('hooks Reporter is declared')
        .and.include('it injects chat provider "per-tenant" (TenantProvider), which is created per tenant (plugin "providers")');
      // Undeclared, the same class is per tenant (what it injects is), and fine.
      await use(definePlugin({ name: 'reporter', setup: (ctx) => ctx.bindHooks(Reporter) }));
    });

    it('what differs per tenant behind a class bound with the raw API is found too, and the chain named', async () => {
      const error = await rejectionOf(use(auditPlugin(dbByClass, Audit, { scope: 'shared' })));
      expect(error).to.include({ plugin: 'audit', reason: 'scope-mismatch' });
      expect((error as Error).message).to.include('(hooks Audit → Symbol(Db) → TenantId)');
    });

    it('what differs per tenant behind a dynamic value (which the kernel cannot read) is refused when it is first created: at use', async () => {
      const error = await rejectionOf(use(auditPlugin(dbByDynamicValue, Audit, { scope: 'shared' })));
      expect(error).to.include({ plugin: 'audit', reason: 'scope-mismatch' });
      expect((error as Error).message).to.include('creating it resolved TenantId').and.include('cannot see into');
      expect(kernel.plugins()).to.deep.equal(['base']);
    });
  });

  describe('no scope declared (the default)', () => {
    it('per tenant when what it declares to inject differs per tenant, through a raw class binding too', async () => {
      await use(auditPlugin(dbByClass, Audit));
      kernel.tenants.define('acme');
      await Promise.all([stepOf('acme'), stepOf()]);
      expect([...created].sort()).to.deep.equal(['acme', 'undefined']);
    });

    it('else one for the kernel and the tenants without bindings of their own, one per tenant with bindings', async () => {
      @injectable()
      class Keyed implements StepHooks {
        constructor(@inject(ApiKey) readonly key: string) {
          created.push(key);
        }
        onStepStart(): void {}
      }
      await use(definePlugin({ name: 'keyed', setup: (ctx) => ctx.bindHooks(Keyed) }));
      kernel.tenants.define('plain');
      kernel.tenants.define('bound', { module: (ctx) => void ctx.bind(ApiKey).toConstantValue('bound-key') });
      await Promise.all([stepOf(), stepOf('plain'), stepOf('bound')]);
      expect(created).to.deep.equal(['kernel-key', 'bound-key']);
    });

    it('is not learnt while resolving: reaching TenantId through a dynamic value is a scope-mismatch naming both (declare it per tenant)', async () => {
      const error = await rejectionOf(use(auditPlugin(dbByDynamicValue, Audit)));
      expect(error).to.include({ plugin: 'audit', reason: 'scope-mismatch' });
      expect((error as Error).message).to.include('hooks Audit declares no scope').and.include('creating it resolved TenantId');
      await use(auditPlugin(dbByDynamicValue, Audit, { scope: 'tenant' }));
      kernel.tenants.define('acme');
      await stepOf('acme');
      expect([...created].sort()).to.deep.equal(['acme', 'undefined']);
    });
  });
});

describe('kernel: extension points (PluginContext.defineExtensionPoint / contribute)', () => {
  const Formatter = Symbol('Formatter');
  interface Formatter {
    format(text: string): string;
  }
  let kernel: Kernel;
  let point: ExtensionPoint<Formatter> | undefined;
  const formats = definePlugin({
    name: 'formats',
    setup(ctx) {
      point = ctx.defineExtensionPoint<Formatter>(Formatter);
    },
  });
  beforeEach(async () => {
    created.length = 0;
    point = undefined;
    kernel = new Kernel();
    await kernel.use(providerPlugin, formats);
  });
  afterEach(async () => {
    await kernel.dispose();
  });

  @injectable()
  class TenantFormatter implements Formatter {
    constructor(@inject(TenantId) readonly tenant: TenantId) {
      created.push(String(tenant));
    }
    format(text: string): string {
      return `${this.tenant ?? 'kernel'}:${text}`;
    }
  }
  @injectable()
  class OnlyForTenants implements Formatter {
    constructor(@inject(TenantId) readonly tenant: TenantId) {}
    format(text: string): string {
      return `only ${this.tenant}:${text}`;
    }
  }

  it('other plugins contribute objects and classes; each scope gets its contributions in registration order, created as their scopes say', async () => {
    await kernel.use(
      definePlugin({
        name: 'contributors',
        requires: ['formats'],
        setup(ctx) {
          ctx.contribute(Formatter, { format: (text: string) => text.toUpperCase() });
          ctx.contribute(Formatter, TenantFormatter, { scope: 'tenant' });
          ctx.contribute(Formatter, OnlyForTenants, { tenantOnly: true });
        },
      }),
    );
    kernel.tenants.define('acme');
    const formatted = (tenant?: string): string[] => point!.contributions(tenant).map((f) => f.format('x'));
    expect(formatted()).to.deep.equal(['X', 'kernel:x']);
    expect(formatted('acme')).to.deep.equal(['X', 'acme:x', 'only acme:x']);
    expect(point!.contributions('acme')).to.equal(point!.contributions('acme'), 'resolved once per scope');
    expect(point).to.include({ id: Formatter, plugin: 'formats' });
    expect(() => point!.contributions('nobody')).to.throw(UnknownTenantError);
  });

  it('a plugin used later is seen; a class of the plugin injects the point by its id', async () => {
    @injectable()
    class Renderer implements StepHooks {
      constructor(@inject(ExtensionPoint) @named(Formatter) readonly formatters: ExtensionPoint<Formatter>) {}
      onStepEnd(): void {
        created.push(...this.formatters.contributions().map((f) => f.format('end')));
      }
    }
    await kernel.use(definePlugin({ name: 'renderer', requires: ['formats'], setup: (ctx) => ctx.bindHooks(Renderer, { scope: 'shared' }) }));
    expect(point!.contributions()).to.deep.equal([]);
    await kernel.use(definePlugin({ name: 'upper', setup: (ctx) => ctx.contribute(Formatter, { format: (text: string) => text.toUpperCase() }) }));
    await kernel.runner().step({ systemPrompt: 'test', history: [] });
    expect(created).to.deep.equal(['END']);
  });

  it('a shared class that injects the contributions themselves, one of them per tenant, is a scope-mismatch naming both', async () => {
    @injectable()
    class Eager implements StepHooks {
      constructor(@multiInject(Formatter) readonly formatters: Formatter[]) {}
      onStepStart(): void {}
    }
    await kernel.use(definePlugin({ name: 'tenant-formatter', setup: (ctx) => ctx.contribute(Formatter, TenantFormatter, { scope: 'tenant' }) }));
    const error = await rejectionOf(kernel.use(definePlugin({ name: 'eager', setup: (ctx) => ctx.bindHooks(Eager, { scope: 'shared' }) })));
    expect(error).to.include({ plugin: 'eager', reason: 'scope-mismatch' });
    expect((error as Error).message).to.include('hooks Eager').and.include('contribution to Symbol(Formatter) TenantFormatter, which is created per tenant (plugin "tenant-formatter")');
  });

  it('refuses a contribution to a point no plugin opened, a point opened twice, and the kernel\'s own identifiers; a failed use takes its point back', async () => {
    const Unknown = Symbol('Unknown');
    const missing = await rejectionOf(kernel.use(definePlugin({ name: 'lost', setup: (ctx) => ctx.contribute(Unknown, {}) })));
    expect(missing).to.include({ plugin: 'lost', reason: 'missing-requirement' });
    expect((missing as Error).message).to.include('Symbol(Unknown)').and.include('requires');
    const twice = await rejectionOf(kernel.use(definePlugin({ name: 'again', setup: (ctx) => void ctx.defineExtensionPoint(Formatter) })));
    expect(twice).to.include({ plugin: 'again', reason: 'conflict' });
    expect((twice as Error).message).to.include('plugin "formats"');
    const own = await rejectionOf(kernel.use(definePlugin({ name: 'own', setup: (ctx) => ctx.contribute(Symbol.for('kosong.StepHooks'), {}) })));
    expect(own).to.include({ plugin: 'own', reason: 'invalid' });
    expect((own as Error).message).to.include('bindHooks');
    const badId = await rejectionOf(kernel.use(definePlugin({ name: 'bad', setup: (ctx) => void ctx.defineExtensionPoint('') })));
    expect(badId).to.include({ plugin: 'bad', reason: 'invalid' });

    const Other = Symbol('Other');
    const failing = await rejectionOf(
      kernel.use(
        definePlugin({
          name: 'half',
          setup(ctx) {
            ctx.defineExtensionPoint(Other);
            throw new Error('setup failed');
          },
        }),
      ),
    );
    expect(KernelError.isInstance(failing)).to.equal(true);
    await kernel.use(definePlugin({ name: 'whole', setup: (ctx) => void ctx.defineExtensionPoint(Other) }));
    expect(kernel.plugins()).to.deep.equal(['base', 'formats', 'whole']);
  });
});
