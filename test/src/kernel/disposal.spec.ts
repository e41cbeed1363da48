/**
 * Taking a tenant or the kernel down: failures are reported to the HookErrorSink (never thrown past
 * `remove` or `dispose`), every deactivation is awaited once, within a deadline, and every generation
 * of a tenant is waited for (issue 21, items 5 to 8).
 */
import { Kernel, PluginError, definePlugin, textPart, toolOk, type HookErrorReport, type KernelOptions, type StepHooks, type Toolset } from '@kosong/core';
import { MockChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';
import { inject, injectable, preDestroy } from 'inversify';
import sinon from 'sinon';
import { deferred, sleep } from '../support.js';
import { base, call, fakeProvider, isSettled } from './support.js';

/** A report as a disposal sends it: a hook-error report that also names the service. */
type Report = HookErrorReport & { readonly service?: string; readonly phase?: string };

const Log = Symbol('Log');
type Log = string[];

/** A hooks class whose `@preDestroy` logs, then behaves as told. */
function destroyable(label: string, behaviour: 'ok' | 'throw' | 'reject' | 'hang' = 'ok') {
  @injectable()
  class Destroyable implements StepHooks {
    constructor(@inject(Log) private readonly log: Log) {}
    onStepStart(): void {}
    @preDestroy()
    destroy(): Promise<void> | void {
      this.log.push(`destroy ${label}`);
      if (behaviour === 'throw') throw new Error(`${label} cannot close`);
      if (behaviour === 'reject') return sleep(2).then(() => Promise.reject(new Error(`${label} cannot close`)));
      if (behaviour === 'hang') return new Promise<void>(() => undefined);
      return sleep(2);
    }
  }
  Object.defineProperty(Destroyable, 'name', { value: `Destroyable ${label}` });
  return Destroyable;
}

describe('kernel: disposal', () => {
  let kernel: Kernel;
  let log: Log;
  let reports: Report[];
  /** Binds the log and a sink collecting every report. */
  let basics: ReturnType<typeof definePlugin>[];

  async function start(options: KernelOptions & { deactivationTimeoutMs?: number } = {}): Promise<void> {
    kernel = new Kernel(options);
    await kernel.use(...basics);
  }

  beforeEach(() => {
    log = [];
    reports = [];
    basics = [
      definePlugin({ name: 'mock', setup: (ctx) => ctx.bindChatProvider('mock', new MockChatProvider([textPart('ok')])) }),
      definePlugin({ name: 'log', setup: (ctx) => void ctx.bind(Log).toConstantValue(log) }),
      definePlugin({ name: 'sink', setup: (ctx) => ctx.bindHookErrorSink({ report: (report) => void reports.push(report as Report) }) }),
    ];
  });
  afterEach(async () => {
    sinon.restore();
    await kernel?.dispose();
  });

  describe('failures are reported, not thrown (item 5)', () => {
    it('tenants.remove resolves when a @preDestroy fails, reports it to the sink naming tenant, plugin and service, and destroys the rest', async () => {
      await start();
      await kernel.use(
        definePlugin({
          name: 'services',
          setup(ctx) {
            ctx.bindHooks(destroyable('a'), { tenantOnly: true });
            ctx.bindHooks(destroyable('b', 'throw'), { tenantOnly: true });
            ctx.bindHooks(destroyable('c', 'reject'), { tenantOnly: true });
          },
        }),
      );
      kernel.tenants.define('acme');
      await kernel.tenants.remove('acme'); // resolves
      expect(log).to.deep.equal(['destroy c', 'destroy b', 'destroy a']);
      expect(kernel.tenants.has('acme')).to.equal(false);
      expect(reports.map((r) => [r.plugin, r.tenant, r.service, r.hook, r.kind, r.phase])).to.deep.equal([
        ['services', 'acme', 'hooks Destroyable c', '@preDestroy', 'rejected', 'dispose'],
        ['services', 'acme', 'hooks Destroyable b', '@preDestroy', 'threw', 'dispose'],
      ]);
      const error = reports[0]!.error as PluginError;
      expect(PluginError.isInstance(error)).to.equal(true);
      expect(error).to.include({ plugin: 'services', reason: 'dispose-failed' });
      expect(error.message).to.include('hooks Destroyable c').and.include('tenant "acme"').and.include('c cannot close');
      expect((error.cause as Error).message).to.equal('c cannot close');
    });

    it('kernel.dispose resolves past failing @preDestroy methods, raw bindings, deactivation handlers and dispose callbacks, reporting each once', async () => {
      await start();
      const Raw = Symbol('Raw');
      const Connection = Symbol('Connection');
      await kernel.use(
        definePlugin({
          name: 'broken',
          setup(ctx) {
            ctx.bindHooks(destroyable('hooks', 'reject'));
            ctx.bind(Raw).to(destroyable('raw', 'throw')).inSingletonScope();
            ctx.bind(Connection).toConstantValue({}).onDeactivation(() => Promise.reject(new Error('connection cannot close')));
            ctx.onDispose(() => {
              throw new Error('dispose callback failed');
            });
          },
        }),
      );
      kernel.container.get(Raw);
      kernel.tenants.define('acme', { module: (ctx) => void ctx.bind('tenant db').toConstantValue({}).onDeactivation(() => Promise.reject(new Error('db cannot close'))) });
      await kernel.dispose(); // resolves
      expect(log).to.deep.equal(['destroy hooks', 'destroy hooks', 'destroy raw']); // acme's instance (it has bindings of its own), then the kernel's
      expect(reports.map((r) => [r.plugin, r.tenant, r.service, r.kind])).to.deep.equal([
        ['broken', 'acme', 'hooks Destroyable hooks', 'rejected'],
        ['tenant acme module', 'acme', 'tenant db', 'rejected'],
        ['broken', undefined, 'hooks Destroyable hooks', 'rejected'],
        ['broken', undefined, 'Symbol(Connection)', 'rejected'],
        ['broken', undefined, 'Symbol(Raw)', 'rejected'], // (inversify's unbindAsync turns the throw into a rejection)
        ['broken', undefined, 'onDispose #1', 'threw'],
      ]);
      for (const report of reports) expect(report).to.include({ stepId: '-', detached: false, phase: 'dispose' });
    });

    it('without a sink, one stderr line per failure names the plugin, the service and the tenant', async () => {
      kernel = new Kernel();
      await kernel.use(basics[0]!, basics[1]!, definePlugin({ name: 'services', setup: (ctx) => ctx.bindHooks(destroyable('b', 'throw'), { tenantOnly: true }) }));
      kernel.tenants.define('acme');
      const write = sinon.stub(process.stderr, 'write').returns(true);
      try {
        await kernel.tenants.remove('acme');
      } finally {
        write.restore();
      }
      const lines = write.args.map((a) => String(a[0]));
      expect(lines).to.have.length(1);
      expect(lines[0]).to.match(/^\[kosong\] dispose: plugin services: hooks Destroyable b @preDestroy threw \(tenant acme\): /);
      expect(lines[0]).to.include('b cannot close');
    });

    it('a sink that throws does not make remove reject (the failure goes to stderr)', async () => {
      kernel = new Kernel();
      await kernel.use(
        basics[0]!,
        basics[1]!,
        definePlugin({
          name: 'services',
          setup(ctx) {
            ctx.bindHooks(destroyable('b', 'throw'), { tenantOnly: true });
            ctx.bindHookErrorSink({
              report: () => {
                throw new Error('sink down');
              },
            });
          },
        }),
      );
      kernel.tenants.define('acme');
      const write = sinon.stub(process.stderr, 'write').returns(true);
      try {
        await kernel.tenants.remove('acme');
      } finally {
        write.restore();
      }
      expect(write.args.map((a) => String(a[0])).join('')).to.include('b cannot close').and.include('sink down');
    });
  });

  describe('module deactivation handlers (item 6)', () => {
    it('a plugin\'s ctx.onDeactivation(id, async fn) for a singleton class binding runs once and is awaited by kernel.dispose', async () => {
      await start();
      const Service = Symbol('Service');
      @injectable()
      class Db {}
      const handler = sinon.spy(async (value: unknown) => {
        await sleep(10);
        log.push(`closed ${value instanceof Db ? 'db' : String(value)}`);
      });
      await kernel.use(
        definePlugin({
          name: 'db',
          setup(ctx) {
            ctx.bind(Service).to(Db).inSingletonScope();
            ctx.onDeactivation(Service, handler);
          },
        }),
      );
      kernel.container.get(Service);
      await kernel.dispose();
      expect(log).to.deep.equal(['closed db']);
      sinon.assert.calledOnce(handler);
      expect(reports).to.deep.equal([]);
    });

    it('a failing module deactivation handler is reported, naming the plugin and the service; the plugin\'s other bindings are still taken back', async () => {
      await start();
      const Service = Symbol('Service');
      const Other = Symbol('Other');
      @injectable()
      class Db {}
      await kernel.use(
        definePlugin({
          name: 'db',
          setup(ctx) {
            ctx.bind(Other).toConstantValue({}).onDeactivation(() => void log.push('other closed'));
            ctx.bind(Service).to(Db).inSingletonScope();
            ctx.onDeactivation(Service, () => sleep(2).then(() => Promise.reject(new Error('db cannot close'))));
          },
        }),
      );
      kernel.container.get(Service);
      await kernel.dispose();
      expect(log).to.deep.equal(['other closed']);
      expect(reports.map((r) => [r.plugin, r.service, r.hook, r.kind])).to.deep.equal([['db', 'Symbol(Service)', 'onDeactivation', 'rejected']]);
    });

    it('a tenant module\'s ctx.onDeactivation(id, async fn) is awaited by remove', async () => {
      await start();
      const Service = Symbol('Service');
      @injectable()
      class UsesService implements StepHooks {
        constructor(@inject(Service) readonly service: object) {}
        onStepStart(): void {}
      }
      await kernel.use(definePlugin({ name: 'user', setup: (ctx) => ctx.bindHooks(UsesService, { tenantOnly: true }) }));
      kernel.tenants.define('acme', {
        module(ctx) {
          ctx.bind(Service).toDynamicValue(() => ({})).inSingletonScope();
          ctx.onDeactivation(Service, async () => {
            await sleep(10);
            log.push('acme closed');
          });
        },
      }); // creates UsesService in acme's scope, resolving acme's singleton
      await kernel.tenants.remove('acme');
      expect(log).to.deep.equal(['acme closed']);
      expect(reports).to.deep.equal([]);
    });
    it('a plugin\'s module handler run for a tenant\'s own binding of the id is awaited by that tenant\'s removal and reported as the tenant\'s', async () => {
      await start();
      const Db = Symbol('Db');
      @injectable()
      class UsesDb implements StepHooks {
        constructor(@inject(Db) readonly db: { tenant: string }) {}
        onStepStart(): void {}
      }
      await kernel.use(
        definePlugin({
          name: 'db',
          setup(ctx) {
            ctx.onDeactivation(Db, async (db: { tenant: string }) => {
              await sleep(10);
              log.push(`closed ${db.tenant}`);
              if (db.tenant === 'globex') throw new Error('globex db cannot close');
            });
            ctx.bindHooks(UsesDb, { tenantOnly: true });
          },
        }),
      );
      for (const tenant of ['acme', 'globex']) {
        kernel.tenants.define(tenant, { module: (ctx) => void ctx.bind(Db).toDynamicValue(() => ({ tenant })).inSingletonScope() });
      }
      await Promise.all([kernel.tenants.remove('acme'), kernel.tenants.remove('globex')]);
      expect([...log].sort()).to.deep.equal(['closed acme', 'closed globex']);
      expect(reports.map((r) => [r.plugin, r.tenant, r.service, r.hook, r.kind])).to.deep.equal([['db', 'globex', 'Symbol(Db)', 'onDeactivation', 'rejected']]);
    });
  });

  describe('a deadline for every deactivation (item 7)', () => {
    it('a @preDestroy that never settles is reported as a timeout after deactivationTimeoutMs; remove resolves and the rest is destroyed', async () => {
      await start({ deactivationTimeoutMs: 30 });
      await kernel.use(
        definePlugin({
          name: 'services',
          setup(ctx) {
            ctx.bindHooks(destroyable('a'), { tenantOnly: true });
            ctx.bindHooks(destroyable('stuck', 'hang'), { tenantOnly: true });
          },
        }),
      );
      kernel.tenants.define('acme');
      const started = Date.now();
      await kernel.tenants.remove('acme');
      expect(Date.now() - started).to.be.lessThan(1000);
      expect(log).to.deep.equal(['destroy stuck', 'destroy a']);
      expect(reports.map((r) => [r.plugin, r.tenant, r.service, r.kind])).to.deep.equal([['services', 'acme', 'hooks Destroyable stuck', 'timeout']]);
      expect((reports[0]!.error as Error).message).to.include('did not settle within 30 ms');
    });

    it('kernel.dispose moves on past a hanging raw binding, deactivation handler, module handler and dispose callback', async () => {
      await start({ deactivationTimeoutMs: 20 });
      const Raw = Symbol('Raw');
      const Constant = Symbol('Constant');
      const Handled = Symbol('Handled');
      @injectable()
      class Plain {}
      const never = (): Promise<void> => new Promise<void>(() => undefined);
      await kernel.use(
        definePlugin({
          name: 'stuck',
          setup(ctx) {
            ctx.bind(Raw).to(destroyable('raw', 'hang')).inSingletonScope();
            ctx.bind(Constant).toConstantValue({}).onDeactivation(never);
            ctx.bind(Handled).to(Plain).inSingletonScope();
            ctx.onDeactivation(Handled, never);
            ctx.onDispose(never);
            ctx.onDispose(() => void log.push('disposed'));
          },
        }),
      );
      kernel.container.get(Raw);
      kernel.container.get(Handled);
      await kernel.dispose();
      expect(log).to.deep.equal(['destroy raw', 'disposed']);
      expect(reports.map((r) => [r.plugin, r.service, r.kind])).to.deep.equal([
        ['stuck', 'Symbol(Handled)', 'timeout'],
        ['stuck', 'Symbol(Constant)', 'timeout'],
        ['stuck', 'Symbol(Raw)', 'timeout'],
        ['stuck', 'onDispose #1', 'timeout'],
      ]);
    });

    it('the deadline is 5 s by default', async () => {
      await start();
      await kernel.use(definePlugin({ name: 'services', setup: (ctx) => ctx.bindHooks(destroyable('stuck', 'hang'), { tenantOnly: true }) }));
      kernel.tenants.define('acme');
      const clock = sinon.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      const removal = kernel.tenants.remove('acme');
      await clock.tickAsync(4_999);
      expect(await isSettled(removal)).to.equal(false);
      await clock.tickAsync(1);
      await removal;
      clock.restore();
      expect(reports.map((r) => r.kind)).to.deep.equal(['timeout']);
      expect((reports[0]!.error as Error).message).to.include('5000 ms');
    });
  });

  describe('every generation of a tenant (item 8)', () => {
    it('kernel.dispose waits for an older copy of a re-defined tenant whose removal is still pending', async () => {
      await start();
      const provider = fakeProvider('p', [textPart('x'), call('a')]);
      await kernel.use(definePlugin({ name: 'p', setup: (ctx) => ctx.bindChatProvider('p', provider) }));
      const gates = [deferred(), deferred()];
      const toolset = (generation: number): Toolset => ({
        tools: [],
        handle: async (c) => {
          await gates[generation]!.promise;
          log.push(`generation ${generation} done`);
          return { toolCallId: c.id, returnValue: toolOk({ output: 'ok' }) };
        },
      });
      kernel.tenants.define('acme', { toolset: toolset(0), provider: 'p' });
      await kernel.runner({ tenant: 'acme' }).step(base); // its tool is still running
      const first = kernel.tenants.remove('acme');
      kernel.tenants.define('acme', { toolset: toolset(1), provider: 'p' });
      await kernel.runner({ tenant: 'acme' }).step(base);
      const second = kernel.tenants.remove('acme');
      expect(kernel.tenants.remove('acme')).to.equal(second); // the id's latest removal
      const disposal = kernel.dispose();
      gates[1]!.resolve();
      await second;
      await sleep(5);
      expect(await isSettled(disposal), 'dispose resolved while the first generation still runs').to.equal(false);
      expect(await isSettled(first)).to.equal(false);
      gates[0]!.resolve();
      await Promise.all([first, disposal]);
      expect(log).to.deep.equal(['generation 1 done', 'generation 0 done']);
    });
  });
});
