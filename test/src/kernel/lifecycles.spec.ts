import { Kernel, PluginError, TenantId, definePlugin, textPart, type HookErrorReport, type StepHooks, type Toolset, type ToolCall, type ToolResult, toolOk } from '@kosong/core';
import { isDisposalErrorReport, type DisposalErrorReport } from '@kosong/core/kernel';
import { MockChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';
import { inject, injectable, preDestroy } from 'inversify';
import sinon from 'sinon';
import { deferred, sleep } from '../support.js';
import { base, isSettled, rejectionOf } from './support.js';

/** A plugin whose hook-error sink collects the disposal reports. */
function collecting(reports: DisposalErrorReport[]) {
  return definePlugin({ name: 'sink', setup: (ctx) => ctx.bindHookErrorSink({ report: (r: HookErrorReport) => void (isDisposalErrorReport(r) && reports.push(r)) }) });
}

const Log = Symbol('Log');
type Log = string[];

/** A hooks class that logs its destruction, after `delayMs` (async) when given. */
function destroyable(label: string, options: { delayMs?: number; fail?: boolean } = {}) {
  @injectable()
  class Destroyable implements StepHooks {
    constructor(@inject(Log) private readonly log: Log) {
      log.push(`create ${label}`);
    }
    onStepStart(): void {}
    @preDestroy()
    async destroy(): Promise<void> {
      if (options.delayMs !== undefined) await sleep(options.delayMs);
      this.log.push(`destroy ${label}`);
      if (options.fail) throw new Error(`${label} cannot close`);
    }
  }
  return Destroyable;
}

const mockPlugin = definePlugin({ name: 'mock', setup: (ctx) => ctx.bindChatProvider('mock', new MockChatProvider([textPart('ok')])) });

describe('kernel: lifecycles of class-bound services', () => {
  let kernel: Kernel;
  let log: Log;
  let logPlugin: ReturnType<typeof definePlugin>;
  beforeEach(async () => {
    kernel = new Kernel();
    log = [];
    logPlugin = definePlugin({ name: 'log', setup: (ctx) => void ctx.bind(Log).toConstantValue(log) });
    await kernel.use(mockPlugin, logPlugin);
  });
  afterEach(async () => {
    sinon.restore();
    await kernel.dispose().catch(() => undefined);
  });

  it('kernel.dispose destroys services in reverse order — plugins in reverse, each plugin\'s services before its dispose callbacks — awaiting each', async () => {
    await kernel.use(
      definePlugin({
        name: 'first',
        setup(ctx) {
          ctx.bindHooks(destroyable('first.a', { delayMs: 15 }));
          ctx.bindHooks(destroyable('first.b'));
          ctx.onDispose(() => void log.push('dispose first'));
        },
      }),
    );
    await kernel.use(
      definePlugin({
        name: 'second',
        setup(ctx) {
          ctx.bindHooks(destroyable('second.a', { delayMs: 5 }));
          ctx.onDispose(async () => {
            await sleep(5);
            log.push('dispose second');
          });
        },
      }),
    );
    await kernel.runner().step(base);
    expect(log).to.deep.equal(['create first.a', 'create first.b', 'create second.a']);
    await kernel.dispose();
    expect(log.slice(3)).to.deep.equal(['destroy second.a', 'dispose second', 'destroy first.b', 'destroy first.a', 'dispose first']);
  });

  it('a failing @preDestroy does not stop the others; dispose reports it to the sink, naming the plugin and the service, and resolves', async () => {
    const reports: DisposalErrorReport[] = [];
    await kernel.use(
      collecting(reports),
      definePlugin({
        name: 'mixed',
        setup(ctx) {
          ctx.bindHooks(destroyable('a'));
          ctx.bindHooks(destroyable('b', { fail: true }));
          ctx.bindHooks(destroyable('c', { delayMs: 5 }));
        },
      }),
    );
    await kernel.dispose();
    expect(log.filter((l) => l.startsWith('destroy'))).to.deep.equal(['destroy c', 'destroy b', 'destroy a']);
    const [only, ...rest] = reports;
    expect(rest).to.deep.equal([]);
    expect(only).to.include({ plugin: 'mixed', service: 'hooks Destroyable', hook: '@preDestroy', kind: 'rejected', tenant: undefined });
    expect(PluginError.isInstance(only!.error)).to.equal(true);
    expect(only!.error).to.include({ plugin: 'mixed', reason: 'dispose-failed' });
    expect(only!.error.message).to.include('hooks Destroyable').and.include('b cannot close');
  });

  // Regression: inversify's unbindAllAsync stops at the first failing @preDestroy, so the services
  // after it were never destroyed. Raw bindings are now unbound one by one, in reverse order, and one
  // that failed is not tried again.
  it('services bound through the raw module API are destroyed one by one, in reverse binding order, past a failure', async () => {
    const A = Symbol('A');
    const B = Symbol('B');
    const C = Symbol('C');
    const reports: DisposalErrorReport[] = [];
    await kernel.use(
      collecting(reports),
      definePlugin({
        name: 'raw',
        setup(ctx) {
          ctx.bind(A).to(destroyable('raw a')).inSingletonScope();
          ctx.bind(B).to(destroyable('raw b', { fail: true })).inSingletonScope();
          ctx.bind(C).to(destroyable('raw c', { delayMs: 5 })).inSingletonScope();
        },
      }),
    );
    for (const id of [C, A, B]) kernel.container.get(id);
    await kernel.dispose();
    expect(log.filter((l) => l.startsWith('destroy'))).to.deep.equal(['destroy raw c', 'destroy raw b', 'destroy raw a']);
    const errors = reports.map((r) => r.error as PluginError);
    expect(errors.map((e) => [e.plugin, e.reason, (e.cause as Error).message])).to.deep.equal([['raw', 'dispose-failed', 'raw b cannot close']]);
    expect(reports[0]!.service).to.equal('Symbol(B)');
  });

  it('a constant\'s deactivation handler runs once, awaited, when its plugin is torn down — resolved or not', async () => {
    const Connection = Symbol('Connection');
    const closed: string[] = [];
    const close = (label: string) => async (): Promise<void> => {
      await sleep(3);
      closed.push(label);
    };
    await kernel.use(
      definePlugin({
        name: 'connections',
        setup(ctx) {
          ctx.bind(Connection).toConstantValue({ id: 'used' }).whenNamed('used').onDeactivation(close('used'));
          ctx.bind(Connection).toConstantValue({ id: 'unused' }).whenNamed('unused').onDeactivation(close('unused'));
        },
      }),
    );
    expect(kernel.container.get(Connection, { name: 'used' })).to.deep.equal({ id: 'used' });
    await kernel.dispose();
    expect(closed).to.deep.equal(['unused', 'used']); // reverse binding order, each once
  });

  it('a constant\'s deactivation runs when the use call fails after its plugin bound it (a connection is closed)', async () => {
    const closed = sinon.spy();
    const error = await rejectionOf(
      kernel.use(
        definePlugin({
          name: 'connects',
          async setup(ctx) {
            ctx.bind('connection').toConstantValue({}).onDeactivation(closed);
            await Promise.resolve();
            throw new Error('handshake failed');
          },
        }),
      ),
    );
    expect(error).to.include({ plugin: 'connects', reason: 'setup-failed' });
    sinon.assert.calledOnce(closed);
  });

  it('dispose waits for an async @preDestroy', async () => {
    const gate = deferred();
    @injectable()
    class Slow implements StepHooks {
      onStepStart(): void {}
      @preDestroy()
      close(): Promise<void> {
        return gate.promise;
      }
    }
    await kernel.use(definePlugin({ name: 'slow', setup: (ctx) => ctx.bindHooks(Slow) }));
    const disposal = kernel.dispose();
    await sleep(5);
    expect(await isSettled(disposal)).to.equal(false);
    gate.resolve();
    await disposal;
  });

  it('a failed use destroys what its check created', async () => {
    const Missing = Symbol('Missing');
    @injectable()
    class Broken implements StepHooks {
      constructor(@inject(Missing) readonly missing: unknown) {}
      onStepStart(): void {}
    }
    const error = await rejectionOf(
      kernel.use(
        definePlugin({
          name: 'half',
          setup(ctx) {
            ctx.bindHooks(destroyable('made'));
            ctx.bindHooks(Broken);
          },
        }),
      ),
    );
    expect(error).to.include({ plugin: 'half', reason: 'unbound-dependency' });
    expect(log).to.deep.equal(['create made', 'destroy made']);
  });

  describe('tenant scopes', () => {
    @injectable()
    class PerTenant implements Toolset {
      readonly tools = [];
      constructor(
        @inject(TenantId) private readonly tenant: TenantId,
        @inject(Log) private readonly log: Log,
      ) {
        log.push(`create ${tenant ?? 'kernel'}`);
      }
      handle(c: ToolCall): ToolResult {
        return { toolCallId: c.id, returnValue: toolOk({ output: this.tenant ?? 'kernel' }) };
      }
      @preDestroy()
      async close(): Promise<void> {
        await sleep(2);
        this.log.push(`destroy ${this.tenant ?? 'kernel'}`);
      }
    }

    it('a tenant-scoped singleton is created once per tenant and destroyed when the tenant is removed', async () => {
      await kernel.use(definePlugin({ name: 'tools', setup: (ctx) => ctx.bindToolset(PerTenant) }));
      kernel.tenants.define('acme');
      kernel.tenants.define('globex');
      await Promise.all(Array.from({ length: 20 }, (_, i) => kernel.runner({ tenant: i % 2 ? 'acme' : 'globex' }).step(base)));
      expect([...log].sort()).to.deep.equal(['create acme', 'create globex', 'create kernel']);
      await kernel.tenants.remove('acme');
      expect(log.filter((l) => l.startsWith('destroy'))).to.deep.equal(['destroy acme']);
      await kernel.dispose();
      expect(log.filter((l) => l.startsWith('destroy'))).to.deep.equal(['destroy acme', 'destroy globex', 'destroy kernel']);
    });

    it('removal destroys the tenant\'s services in reverse creation order, then its own bindings; a failure is reported to the sink and removal resolves after all ran', async () => {
      const Db = Symbol('Db');
      const reports: DisposalErrorReport[] = [];
      await kernel.use(
        collecting(reports),
        definePlugin({
          name: 'services',
          setup(ctx) {
            ctx.bindHooks(destroyable('hooks 1'));
            ctx.bindHooks(destroyable('hooks 2', { fail: true }));
            ctx.bindHooks(destroyable('hooks 3', { delayMs: 3 }));
          },
        }),
      );
      kernel.tenants.define('acme', {
        module: (ctx) =>
          void ctx
            .bind(Db)
            .toDynamicValue(() => ({ open: true }))
            .inSingletonScope()
            .onDeactivation(async () => {
              await sleep(2);
              log.push('destroy db');
            }),
      });
      kernel.runner({ tenant: 'acme' }); // (the services were created at define: the tenant has bindings)
      await kernel.tenants.remove('acme');
      expect(log.slice(6)).to.deep.equal(['destroy hooks 3', 'destroy hooks 2', 'destroy hooks 1']);
      expect(reports.map((r) => [r.plugin, r.tenant, (r.error as PluginError).reason])).to.deep.equal([['services', 'acme', 'dispose-failed']]);
      expect(reports[0]!.error.message).to.include('tenant "acme"');
      expect(kernel.tenants.has('acme')).to.equal(false);
    });

    it('the tenant module\'s singletons are deactivated (awaited) when the tenant is removed, only if they were created', async () => {
      const Db = Symbol('Db');
      const Unused = Symbol('Unused');
      kernel.tenants.define('acme', {
        module(ctx) {
          ctx
            .bind(Db)
            .toDynamicValue(() => ({}))
            .inSingletonScope()
            .onDeactivation(async () => {
              await sleep(3);
              log.push('db closed');
            });
          ctx
            .bind(Unused)
            .toDynamicValue(() => ({}))
            .inSingletonScope()
            .onDeactivation(() => void log.push('unused closed'));
        },
      });
      @injectable()
      class UsesDb implements StepHooks {
        constructor(@inject(Db) readonly db: object) {}
        onStepStart(): void {}
      }
      await kernel.use(
        definePlugin({
          name: 'db user',
          setup(ctx) {
            ctx.bind(Db).toConstantValue({ kernel: true }); // the kernel's default; the tenant binds its own
            ctx.bindHooks(UsesDb);
          },
        }),
      );
      await kernel.tenants.remove('acme');
      expect(log).to.deep.equal(['db closed']);
    });

    it('a tenant module\'s constant is deactivated on removal even if nothing resolved it', async () => {
      const closed = sinon.spy();
      kernel.tenants.define('acme', { module: (ctx) => void ctx.bind('connection').toConstantValue({ tenant: 'acme' }).onDeactivation(closed) });
      await kernel.tenants.remove('acme');
      sinon.assert.calledOnceWithExactly(closed, { tenant: 'acme' });
    });

    it('kernel.dispose removes the tenants (destroying their services) before the plugins\' services', async () => {
      await kernel.use(definePlugin({ name: 'tools', setup: (ctx) => ctx.bindToolset(PerTenant) }));
      kernel.tenants.define('acme');
      await kernel.runner({ tenant: 'acme' }).step(base);
      await kernel.dispose();
      expect(log).to.deep.equal(['create kernel', 'create acme', 'destroy acme', 'destroy kernel']);
    });
  });
});
