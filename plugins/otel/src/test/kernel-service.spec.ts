import { Kernel, PluginError, StepHooks, definePlugin, textPart } from '@kosong/core';
import { MockChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';
import sinon from 'sinon';
import { otelPlugin } from '../otel-plugin.js';
import { OtelStepHooks } from '../otel-step-hooks.js';
import { Telemetry, history, testToolset } from './support.js';

const mockPlugin = definePlugin({
  name: 'mock',
  setup: (ctx) => (ctx.bindChatProvider('mock', new MockChatProvider([textPart('hello')])), ctx.bindToolset(testToolset())),
});

describe('otelPlugin as a class-based plugin', () => {
  afterEach(() => sinon.restore());

  it('the kernel creates its OtelStepHooks with the plugin\'s options, and ends its spans (endAll) when disposing it', async () => {
    const endAll = sinon.spy(OtelStepHooks.prototype, 'endAll');
    const telemetry = new Telemetry();
    const kernel = new Kernel();
    await kernel.use(mockPlugin, otelPlugin(telemetry.options({ captureContent: true })));
    const [hooks] = kernel.container.getAll(StepHooks);
    expect(hooks).to.be.instanceOf(OtelStepHooks);
    await kernel.runner().step({ systemPrompt: '', history });
    // The injected options are used: content is captured, through the given tracer provider.
    expect(telemetry.span('chat mock').attributes['gen_ai.output.messages']).to.be.a('string').and.include('hello');
    sinon.assert.notCalled(endAll);
    await kernel.dispose();
    sinon.assert.calledOnce(endAll);
    expect(endAll.firstCall.thisValue).to.equal(hooks);
  });

  it('a tenant with bindings of its own gets its own hooks, ended when the tenant is removed', async () => {
    const endAll = sinon.spy(OtelStepHooks.prototype, 'endAll');
    const telemetry = new Telemetry();
    const kernel = new Kernel();
    try {
      await kernel.use(mockPlugin, otelPlugin(telemetry.options()));
      kernel.tenants.define('acme', { module: (ctx) => ctx.bind('region').toConstantValue('eu') });
      await kernel.runner({ tenant: 'acme' }).step({ systemPrompt: '', history });
      await kernel.runner().step({ systemPrompt: '', history });
      await kernel.tenants.remove('acme');
      sinon.assert.calledOnce(endAll);
      expect(endAll.firstCall.thisValue).to.not.equal(kernel.container.getAll(StepHooks)[0]);
      expect(telemetry.spans().map((s) => s.attributes['kosong.tenant.id'])).to.deep.equal(['acme', undefined]);
    } finally {
      await kernel.dispose();
    }
  });

  it('is one per kernel: a second one fails its use call, naming it', async () => {
    const telemetry = new Telemetry();
    const kernel = new Kernel();
    try {
      await kernel.use(mockPlugin, otelPlugin(telemetry.options()));
      const error = await kernel.use(otelPlugin({ ...telemetry.options(), name: 'second' })).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(PluginError.isInstance(error)).to.equal(true);
      expect(error).to.include({ plugin: 'second', reason: 'setup-failed' });
      expect((error as Error).message).to.include('already used in this kernel');
      expect(kernel.plugins()).to.deep.equal(['mock', 'otel']);
    } finally {
      await kernel.dispose();
    }
  });
});
