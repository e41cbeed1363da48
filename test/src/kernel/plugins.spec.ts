import {
  ChatProvider,
  HookErrorSink,
  Kernel,
  KernelError,
  PluginError,
  StepHooks,
  Toolset,
  UnknownProviderError,
  definePlugin,
  textPart,
  type HookErrorReport,
  type Plugin,
} from '@kosong/core';
import type { PluginFailure } from '@kosong/core/kernel';
import { expect } from 'chai';
import sinon from 'sinon';
import { deferred } from '../support.js';
import { base, call, fakeProvider, outputOf, rejectionOf, spyToolset } from './support.js';

/** A plugin registering one provider (a fake with a stubbed `generate`). */
const providerPlugin = (pluginName: string, provider: ChatProvider, options: { default?: boolean } = {}): Plugin =>
  definePlugin({ name: pluginName, setup: (ctx) => ctx.bindChatProvider(provider.name, provider, options) });

/** Asserts `error` is a PluginError about `plugin` for `reason`. */
function expectPluginError(error: unknown, plugin: string, reason: PluginFailure): PluginError {
  expect(PluginError.isInstance(error), `expected a PluginError, got ${String(error)}`).to.equal(true);
  expect(KernelError.isInstance(error)).to.equal(true);
  const pluginError = error as PluginError;
  expect(pluginError.plugin).to.equal(plugin);
  expect(pluginError.reason).to.equal(reason);
  expect(pluginError.message).to.include(`"${plugin}"`);
  return pluginError;
}

describe('kernel: plugins and wiring', () => {
  let kernel: Kernel;
  beforeEach(() => {
    kernel = new Kernel();
  });
  afterEach(async () => {
    sinon.restore();
    await kernel.dispose();
  });

  describe('wiring', () => {
    it('runs the step with the provider and the toolset it resolved', async () => {
      const provider = fakeProvider('fake', [textPart('hi'), call('a', '{"x":1}'), call('b')]);
      const toolset = spyToolset('global');
      await kernel.use(
        providerPlugin('provider', provider),
        definePlugin({ name: 'tools', setup: (ctx) => ctx.bindToolset(toolset) }),
      );
      const runner = kernel.runner();
      expect(runner.provider).to.equal(provider);

      const result = await runner.step(base);

      sinon.assert.calledOnce(provider.generate);
      const [systemPrompt, tools, history] = provider.generate.firstCall.args as unknown[];
      expect(systemPrompt).to.equal(base.systemPrompt);
      expect(tools).to.equal(toolset.tools);
      expect(history).to.equal(base.history);
      expect(result.message.content).to.deep.equal([textPart('hi')]);
      expect(toolset.handle.callCount).to.equal(2);
      expect(toolset.handle.getCalls().map((c) => c.args[0])).to.deep.equal([call('a', '{"x":1}'), call('b')]);
      for (const c of toolset.handle.getCalls()) {
        expect(c.args[1].stepId).to.equal(result.stepId);
        expect(c.args[1].signal).to.be.instanceOf(AbortSignal);
      }
      expect((await result.toolResults()).map(outputOf)).to.deep.equal(['global:a', 'global:b']);
    });

    it('passes the signal to the provider', async () => {
      const provider = fakeProvider('fake');
      await kernel.use(providerPlugin('provider', provider));
      const controller = new AbortController();
      await kernel.runner().step({ ...base, signal: controller.signal });
      expect(provider.generate.firstCall.args[3]).to.deep.equal({ signal: controller.signal });
    });

    it('uses an empty toolset when none is bound: tool calls get an error result, nothing throws', async () => {
      await kernel.use(providerPlugin('provider', fakeProvider('fake', [call('a')])));
      const result = await kernel.runner().step(base);
      const [only] = await result.toolResults();
      expect(only!.toolCallId).to.equal('a');
      expect(only!.returnValue.isError).to.equal(true);
    });

    it('exposes plugins and service identifiers through the container', async () => {
      const provider = fakeProvider('fake');
      const toolset = spyToolset('global');
      const hooks = {};
      const sink = { report: () => undefined };
      await kernel.use(
        definePlugin({
          name: 'all',
          setup: (ctx) => {
            expect(ctx.plugin).to.equal('all');
            ctx.bindChatProvider('fake', provider);
            ctx.bindToolset(toolset);
            ctx.bindHooks(hooks);
            ctx.bindHookErrorSink(sink);
          },
        }),
      );
      expect(kernel.plugins()).to.deep.equal(['all']);
      expect(kernel.container.get(ChatProvider, { name: 'fake' })).to.equal(provider);
      expect(kernel.container.get(Toolset)).to.equal(toolset);
      expect(kernel.container.getAll(StepHooks)).to.deep.equal([hooks]);
      expect(kernel.container.get(HookErrorSink)).to.equal(sink);
    });
  });

  describe('provider selection', () => {
    it('a named provider: only that provider is called', async () => {
      const a = fakeProvider('a');
      const b = fakeProvider('b');
      await kernel.use(providerPlugin('pa', a), providerPlugin('pb', b));
      const result = await kernel.runner({ provider: 'b' }).step(base);
      expect(result.message.content).to.deep.equal([textPart('hello from b')]);
      sinon.assert.calledOnce(b.generate);
      sinon.assert.notCalled(a.generate);
    });

    it('no name: the first registered provider is the default', async () => {
      const a = fakeProvider('a');
      const b = fakeProvider('b');
      await kernel.use(providerPlugin('pa', a));
      await kernel.use(providerPlugin('pb', b));
      expect(kernel.providers()).to.deep.equal(['a', 'b']);
      await kernel.runner().step(base);
      sinon.assert.calledOnce(a.generate);
      sinon.assert.notCalled(b.generate);
    });

    it('no name: a provider registered with { default: true } wins, even when registered later', async () => {
      const a = fakeProvider('a');
      const b = fakeProvider('b');
      const c = fakeProvider('c');
      await kernel.use(providerPlugin('pa', a));
      await kernel.use(
        definePlugin({
          name: 'pbc',
          setup: (ctx) => {
            ctx.bindChatProvider('b', b);
            ctx.bindChatProvider('c', c, { default: true });
          },
        }),
      );
      expect(kernel.providers()).to.deep.equal(['c', 'a', 'b']);
      expect(kernel.runner().provider).to.equal(c);
      await kernel.runner().step(base);
      sinon.assert.calledOnce(c.generate);
      sinon.assert.notCalled(a.generate);
      sinon.assert.notCalled(b.generate);
    });

    it('two providers claiming { default: true } conflict', async () => {
      await kernel.use(providerPlugin('pa', fakeProvider('a'), { default: true }));
      const error = await rejectionOf(kernel.use(providerPlugin('pb', fakeProvider('b'), { default: true })));
      expectPluginError(error, 'pb', 'conflict');
      expect(kernel.providers()).to.deep.equal(['a']);
    });

    it('two plugins registering the same provider name conflict', async () => {
      await kernel.use(providerPlugin('pa', fakeProvider('same')));
      const error = await rejectionOf(kernel.use(providerPlugin('pb', fakeProvider('same'))));
      expect(expectPluginError(error, 'pb', 'conflict').message).to.include('"pa"');
      expect(kernel.plugins()).to.deep.equal(['pa']);
    });

    it('an unknown provider name is an UnknownProviderError listing the registered ones', async () => {
      await kernel.use(providerPlugin('pa', fakeProvider('a')), providerPlugin('pb', fakeProvider('b')));
      const error = await rejectionOf(() => kernel.runner({ provider: 'nope' }));
      expect(UnknownProviderError.isInstance(error)).to.equal(true);
      expect(KernelError.isInstance(error)).to.equal(true);
      const unknown = error as UnknownProviderError;
      expect(unknown.provider).to.equal('nope');
      expect(unknown.available).to.deep.equal(['a', 'b']);
      expect(unknown.message).to.include('"nope"').and.include('"a"').and.include('"b"');
      // A tenant naming an unknown provider fails the same way.
      const fromTenant = await rejectionOf(() => kernel.tenants.define('t', { provider: 'nope' }));
      expect(UnknownProviderError.isInstance(fromTenant)).to.equal(true);
      expect(kernel.tenants.has('t')).to.equal(false);
    });

    it('no provider at all: the step rejects with an UnknownProviderError naming none', async () => {
      const toolset = spyToolset('global');
      await kernel.use(definePlugin({ name: 'tools', setup: (ctx) => ctx.bindToolset(toolset) }));
      const error = await rejectionOf(kernel.runner().step(base));
      expect(UnknownProviderError.isInstance(error)).to.equal(true);
      expect((error as UnknownProviderError).provider).to.equal(undefined);
      expect((error as UnknownProviderError).available).to.deep.equal([]);
      sinon.assert.notCalled(toolset.handle);
    });

    it('a provider factory is called once, lazily, on first use', async () => {
      const provider = fakeProvider('lazy');
      const factory = sinon.spy(() => provider);
      await kernel.use(definePlugin({ name: 'lazy', setup: (ctx) => ctx.bindChatProvider('lazy', factory) }));
      expect(kernel.providers()).to.deep.equal(['lazy']);
      const runner = kernel.runner();
      sinon.assert.notCalled(factory);
      await runner.step(base);
      await kernel.runner({ provider: 'lazy' }).step(base);
      await Promise.all([runner.step(base), runner.step(base)]);
      sinon.assert.calledOnce(factory);
      expect(provider.generate.callCount).to.equal(4);
    });

    it('a provider factory is not called when another provider is used', async () => {
      const factory = sinon.spy(() => fakeProvider('lazy'));
      const eager = fakeProvider('eager');
      await kernel.use(
        definePlugin({ name: 'lazy', setup: (ctx) => ctx.bindChatProvider('lazy', factory) }),
        providerPlugin('eager', eager),
      );
      await kernel.runner({ provider: 'eager' }).step(base);
      sinon.assert.notCalled(factory);
    });
  });

  describe('plugin errors', () => {
    it('a duplicate name, in a later call or in the same call, is a PluginError "duplicate"', async () => {
      const setup = sinon.spy();
      await kernel.use(definePlugin({ name: 'one', setup }));
      expectPluginError(await rejectionOf(kernel.use(definePlugin({ name: 'one', setup }))), 'one', 'duplicate');
      expectPluginError(
        await rejectionOf(kernel.use(definePlugin({ name: 'two', setup }), definePlugin({ name: 'two', setup }))),
        'two',
        'duplicate',
      );
      expect(setup.callCount).to.equal(1);
      expect(kernel.plugins()).to.deep.equal(['one']);
    });

    it('two concurrent use calls with the same name: the second is a duplicate', async () => {
      const gate = deferred();
      const first = kernel.use(definePlugin({ name: 'same', setup: () => gate.promise }));
      const second = kernel.use(definePlugin({ name: 'same', setup: () => undefined }));
      gate.resolve();
      await first;
      expectPluginError(await rejectionOf(second), 'same', 'duplicate');
      expect(kernel.plugins()).to.deep.equal(['same']);
    });

    it('a missing requirement is a PluginError "missing-requirement" naming the plugin that requires it', async () => {
      const setup = sinon.spy();
      const error = await rejectionOf(kernel.use(definePlugin({ name: 'needy', requires: ['absent'], setup })));
      expect(expectPluginError(error, 'needy', 'missing-requirement').message).to.include('"absent"');
      sinon.assert.notCalled(setup);
      expect(kernel.plugins()).to.deep.equal([]);
    });

    it('a requirement cycle is a PluginError "requirement-cycle"; nothing is set up', async () => {
      const setup = sinon.spy();
      const a = definePlugin({ name: 'a', requires: ['b'], setup });
      const b = definePlugin({ name: 'b', requires: ['c'], setup });
      const c = definePlugin({ name: 'c', requires: ['a'], setup });
      const error = await rejectionOf(kernel.use(a, b, c));
      const pluginError = expectPluginError(error, 'a', 'requirement-cycle');
      expect(pluginError.message).to.include('a → b → c → a');
      sinon.assert.notCalled(setup);
      expect(kernel.plugins()).to.deep.equal([]);
      // A plugin requiring itself is a cycle too.
      expectPluginError(await rejectionOf(kernel.use(definePlugin({ name: 'self', requires: ['self'], setup }))), 'self', 'requirement-cycle');
    });

    it('requirements met in the same call are set up first, whatever the argument order', async () => {
      const order: string[] = [];
      const plugin = (name: string, requires: string[] = []): Plugin => definePlugin({ name, requires, setup: () => void order.push(name) });
      await kernel.use(plugin('app', ['tools', 'provider']), plugin('tools', ['provider']), plugin('provider'));
      expect(order).to.deep.equal(['provider', 'tools', 'app']);
      expect(kernel.plugins()).to.deep.equal(['provider', 'tools', 'app']);
      // ... and a requirement used by an earlier call is met as well.
      await kernel.use(plugin('late', ['app']));
      expect(order.at(-1)).to.equal('late');
    });

    for (const mode of ['sync', 'async'] as const) {
      it(`a setup that fails (${mode}) is a PluginError "setup-failed" with the cause`, async () => {
        const boom = new Error(`boom (${mode})`);
        const failing = definePlugin({
          name: 'failing',
          setup:
            mode === 'sync'
              ? () => {
                  throw boom;
                }
              : async () => {
                  await new Promise((resolve) => setTimeout(resolve, 1));
                  throw boom;
                },
        });
        const error = await rejectionOf(kernel.use(failing));
        const pluginError = expectPluginError(error, 'failing', 'setup-failed');
        expect(pluginError.cause).to.equal(boom);
        expect(pluginError.message).to.include(boom.message);
        expect(kernel.plugins()).to.deep.equal([]);
        // The name is free again.
        await kernel.use(definePlugin({ name: 'failing', setup: () => undefined }));
        expect(kernel.plugins()).to.deep.equal(['failing']);
      });
    }

    it('a value that is not a plugin is a PluginError "invalid"', async () => {
      expectPluginError(await rejectionOf(kernel.use({ name: '', setup: () => undefined })), '', 'invalid');
      expectPluginError(await rejectionOf(kernel.use({ name: 'x' } as unknown as Plugin)), 'x', 'invalid');
      expectPluginError(await rejectionOf(() => definePlugin({ name: ' ', setup: () => undefined })), ' ', 'invalid');
      expect(kernel.plugins()).to.deep.equal([]);
    });

    it('two plugins binding a global toolset conflict (later call, or same call)', async () => {
      const first = definePlugin({ name: 'tools-1', setup: (ctx) => ctx.bindToolset(spyToolset('1')) });
      const second = definePlugin({ name: 'tools-2', setup: (ctx) => ctx.bindToolset(spyToolset('2')) });
      const third = definePlugin({ name: 'tools-3', setup: (ctx) => ctx.bindToolset(spyToolset('3')) });

      // Same call: the second fails, and the first one's toolset is rolled back with it.
      expect(expectPluginError(await rejectionOf(kernel.use(first, second)), 'tools-2', 'conflict').message).to.include('"tools-1"');
      expect(kernel.container.isBound(Toolset)).to.equal(false);
      expect(kernel.plugins()).to.deep.equal([]);

      await kernel.use(first);
      expectPluginError(await rejectionOf(kernel.use(third)), 'tools-3', 'conflict');
      expect(kernel.container.getAll(Toolset)).to.have.length(1);
    });

    describe('a failed use leaves the kernel exactly as it was', () => {
      const Custom = Symbol('custom');
      const Shared = Symbol('shared');
      let log: string[];
      let baseProvider: ReturnType<typeof fakeProvider>;
      let baseHooks: { onStepStart: sinon.SinonSpy };

      beforeEach(async () => {
        log = [];
        baseProvider = fakeProvider('base', [call('a')]);
        baseHooks = { onStepStart: sinon.spy() };
        await kernel.use(
          definePlugin({
            name: 'base',
            setup: (ctx) => {
              ctx.bindChatProvider('base', baseProvider);
              ctx.bindHooks(baseHooks);
              ctx.bind(Shared).toDynamicValue(() => ({ shared: true }));
            },
          }),
        );
      });

      /** A consistent picture of what the kernel holds. */
      const snapshot = (): unknown => ({
        plugins: kernel.plugins(),
        providers: kernel.providers(),
        toolset: kernel.container.isBound(Toolset),
        custom: kernel.container.isBound(Custom),
        sink: kernel.container.isBound(HookErrorSink),
        hooks: kernel.container.getAll(StepHooks).length,
        namedProviders: ['good', 'dependent', 'bad'].map((name) => kernel.container.isBound(ChatProvider, { name })),
      });

      const failures: Record<string, (ctx: Parameters<Plugin['setup']>[0]) => void | Promise<void>> = {
        'sync throw': () => {
          throw new Error('boom');
        },
        'async rejection': async () => {
          await Promise.resolve();
          throw new Error('boom');
        },
        'conflict (binds a second global toolset)': (ctx) => ctx.bindToolset(spyToolset('bad')),
        'conflict (binds a provider name taken in this call)': (ctx) => ctx.bindChatProvider('good', fakeProvider('good')),
      };

      for (const [how, fail] of Object.entries(failures)) {
        it(`when the last plugin of the call fails by ${how}: earlier plugins of the call are undone and disposed`, async () => {
          const before = snapshot();
          const goodToolset = spyToolset('good');
          const goodHooks = { onStepStart: sinon.spy(), onCleanup: sinon.spy() };
          const goodSink = { report: sinon.spy() };
          const activated = sinon.spy();
          const good = definePlugin({
            name: 'good',
            setup: (ctx) => {
              ctx.bindChatProvider('good', fakeProvider('good', [call('g')]), { default: true });
              ctx.bindToolset(goodToolset);
              ctx.bindHooks(goodHooks);
              ctx.bindHookErrorSink(goodSink);
              ctx.bind(Custom).toConstantValue('custom');
              ctx.onActivation(Shared, (_context, value) => {
                activated();
                return value;
              });
              ctx.onDispose(() => void log.push('good:1'));
              ctx.onDispose(() => void log.push('good:2'));
            },
          });
          const dependent = definePlugin({
            name: 'dependent',
            requires: ['good'],
            setup: async (ctx) => {
              await Promise.resolve();
              ctx.bindChatProvider('dependent', fakeProvider('dependent'));
              ctx.onDispose(async () => {
                await Promise.resolve();
                log.push('dependent');
              });
            },
          });
          const bad = definePlugin({
            name: 'bad',
            requires: ['dependent'],
            setup: async (ctx) => {
              ctx.bindChatProvider('bad', fakeProvider('bad'));
              ctx.onDispose(() => void log.push('bad'));
              await fail(ctx);
            },
          });

          // The argument order differs from the setup order on purpose.
          const error = await rejectionOf(kernel.use(bad, good, dependent));
          expect(PluginError.isInstance(error)).to.equal(true);
          expect((error as PluginError).plugin).to.equal('bad');

          expect(snapshot()).to.deep.equal(before);
          expect(log).to.deep.equal(['bad', 'dependent', 'good:2', 'good:1']);

          // Steps see nothing of the failed call: the old default provider, no toolset, no hooks of it.
          const result = await kernel.runner().step(base);
          sinon.assert.calledOnce(baseProvider.generate);
          expect((await result.toolResults())[0]!.returnValue.isError).to.equal(true);
          sinon.assert.notCalled(goodToolset.handle);
          sinon.assert.notCalled(goodHooks.onStepStart);
          sinon.assert.calledOnce(baseHooks.onStepStart);
          sinon.assert.notCalled(goodSink.report);
          kernel.container.get(Shared); // the activation handler of the failed call is gone too
          sinon.assert.notCalled(activated);

          // Everything the failed call claimed (names, default, global toolset) is free again.
          await kernel.use(good, dependent);
          expect(kernel.plugins()).to.deep.equal(['base', 'good', 'dependent']);
          expect(kernel.providers()).to.deep.equal(['good', 'base', 'dependent']);
          await kernel.runner().step(base);
          sinon.assert.calledOnce(goodToolset.handle);
          sinon.assert.calledOnce(goodHooks.onStepStart);
          kernel.container.get(Shared);
          sinon.assert.calledOnce(activated);
        });
      }
    });
  });

  describe('dispose', () => {
    it('runs onDispose callbacks in reverse order, across and within plugins', async () => {
      const log: string[] = [];
      const plugin = (name: string, callbacks: number): Plugin =>
        definePlugin({
          name,
          setup: (ctx) => {
            for (let i = 1; i <= callbacks; i++) ctx.onDispose(() => void log.push(`${name}:${i}`));
          },
        });
      await kernel.use(plugin('a', 2), plugin('b', 1));
      await kernel.use(plugin('c', 2));
      expect(log).to.deep.equal([]);
      await kernel.dispose();
      expect(log).to.deep.equal(['c:2', 'c:1', 'b:1', 'a:2', 'a:1']);
      await kernel.dispose(); // idempotent
      expect(log).to.have.length(5);
    });

    it('deactivates a singleton bound through the raw inversify API once it was resolved', async () => {
      const Db = Symbol('Db');
      const Unused = Symbol('Unused');
      const deactivated = sinon.spy();
      const unusedDeactivated = sinon.spy();
      const created = sinon.spy();
      await kernel.use(
        definePlugin({
          name: 'db',
          setup: (ctx) => {
            ctx
              .bind<{ open: boolean }>(Db)
              .toDynamicValue(() => {
                const db = { open: true };
                created(db);
                return db;
              })
              .inSingletonScope()
              .onDeactivation((db) => {
                db.open = false;
                deactivated(db);
              });
            ctx.bind(Unused).toDynamicValue(() => ({})).inSingletonScope().onDeactivation(unusedDeactivated);
            expect(ctx.isBound(Db)).to.equal(true);
          },
        }),
      );
      const db = kernel.container.get<{ open: boolean }>(Db);
      expect(kernel.container.get(Db)).to.equal(db);
      sinon.assert.calledOnce(created);
      await kernel.dispose();
      sinon.assert.calledOnceWithExactly(deactivated, db);
      expect(db.open).to.equal(false);
      sinon.assert.notCalled(unusedDeactivated);
      expect(kernel.container.isBound(Db)).to.equal(false);
    });

    it('runs every dispose callback even if some fail, reports each failure to the hook-error sink, and resolves', async () => {
      const log: string[] = [];
      const reports: HookErrorReport[] = [];
      const boom = new Error('cannot close');
      await kernel.use(
        definePlugin({ name: 'sink', setup: (ctx) => ctx.bindHookErrorSink({ report: (report) => void reports.push(report) }) }),
        definePlugin({ name: 'fine', setup: (ctx) => ctx.onDispose(() => void log.push('fine')) }),
        definePlugin({
          name: 'broken',
          setup: (ctx) =>
            ctx.onDispose(() => {
              throw boom;
            }),
        }),
      );
      await kernel.dispose();
      const [only, ...rest] = reports;
      expect(rest).to.deep.equal([]);
      expect(only).to.include({ plugin: 'broken', hook: 'onDispose', kind: 'threw' });
      expect(expectPluginError(only!.error, 'broken', 'dispose-failed').cause).to.equal(boom);
      expect(log).to.deep.equal(['fine']);
    });

    it('waits for a use in progress, and disposes what it set up', async () => {
      const gate = deferred();
      const disposed = sinon.spy();
      const using = kernel.use(
        definePlugin({
          name: 'slow',
          setup: async (ctx) => {
            ctx.onDispose(disposed);
            await gate.promise;
          },
        }),
      );
      const disposing = kernel.dispose();
      gate.resolve();
      await using;
      await disposing;
      sinon.assert.calledOnce(disposed);
    });

    it('a disposed kernel throws a KernelError on use, runner, tenant definition and steps of older runners', async () => {
      await kernel.use(providerPlugin('pa', fakeProvider('a')));
      const runner = kernel.runner();
      await kernel.dispose();
      for (const error of [
        await rejectionOf(kernel.use(definePlugin({ name: 'late', setup: () => undefined }))),
        await rejectionOf(() => kernel.runner()),
        await rejectionOf(() => kernel.tenants.define('t')),
        await rejectionOf(runner.step(base)),
      ]) {
        expect(KernelError.isInstance(error), String(error)).to.equal(true);
        expect(PluginError.isInstance(error)).to.equal(false);
        expect((error as Error).message).to.match(/disposed/);
      }
    });
  });
});
