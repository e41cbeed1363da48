import { Kernel, StepHooks, definePlugin, textPart } from '@kosong/core';
import { inject, injectable } from '@kosong/core/kernel';
import { MockChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';
import { loggingPlugin } from '../logging-plugin.js';
import { StepLogHooks } from '../step-log-hooks.js';
import { StepLogger } from '../step-logger.js';
import { MemoryDestination, kernelWith, providerPlugin } from './support.js';

describe('loggingPlugin as a class-based plugin', () => {
  it('binds its logger as a service, and its hooks as a StepLogHooks the kernel creates with it', async () => {
    const destination = new MemoryDestination();
    const logs = new StepLogger({ destination });
    @injectable()
    class Auditor {
      constructor(@inject(StepLogger) readonly logs: StepLogger) {}
    }
    const kernel = await kernelWith(
      providerPlugin(new MockChatProvider([textPart('hi')])),
      loggingPlugin(logs),
      definePlugin({ name: 'auditor', setup: (ctx) => void ctx.bind(Auditor).toSelf() }),
    );
    try {
      expect(kernel.container.get(Auditor).logs).to.equal(logs);
      const [hooks] = kernel.container.getAll(StepHooks);
      expect(hooks).to.be.instanceOf(StepLogHooks);
      expect((hooks as StepLogHooks).onStepStart).to.equal(logs.hooks.onStepStart);
      expect((hooks as StepLogHooks).onPart, 'no onPart hook unless parts are logged').to.equal(undefined);
      await kernel.runner().step({ systemPrompt: '', history: [{ role: 'user', content: [textPart('hello')] }] });
      expect(destination.events('step.start')).to.have.length(1);
    } finally {
      await kernel.dispose();
    }
  });

  it('with logParts, the created hooks have onPart', async () => {
    const logs = new StepLogger({ destination: new MemoryDestination(), logParts: true });
    const kernel = new Kernel();
    try {
      await kernel.use(loggingPlugin(logs));
      expect((kernel.container.getAll(StepHooks)[0] as StepLogHooks).onPart).to.equal(logs.hooks.onPart);
    } finally {
      await kernel.dispose();
    }
  });

  it('flushes through the logger\'s deactivation when the plugin\'s use call fails after it', async () => {
    const destination = new MemoryDestination();
    const logs = new StepLogger({ destination });
    const kernel = new Kernel();
    try {
      const failing = definePlugin({
        name: 'failing',
        requires: ['logging'],
        setup: () => {
          throw new Error('no');
        },
      });
      const error = await kernel.use(loggingPlugin(logs), failing).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).to.include({ plugin: 'failing', reason: 'setup-failed' });
      expect(destination.flushes).to.equal(1);
      expect(kernel.container.isBound(StepLogger)).to.equal(false);
    } finally {
      await kernel.dispose();
    }
  });
});
