/**
 * Generation options threaded through generate(), step(), the agent loop and the kernel: per-call
 * values win over the provider's, hooks see the effective options, bad ones fail with typed errors.
 */
import {
  Agent,
  definePlugin,
  generate,
  InvalidGenerationOptionError,
  Kernel,
  step,
  textPart,
  toolCall,
  toolOk,
  UnsupportedGenerationOptionError,
  type GenerationOptions,
  type Message,
  type StepEndEvent,
  type StepStartEvent,
  type Toolset,
} from '@kosong/core';
import { ChaosChatProvider, MockChatProvider, ScriptedEchoChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';

const history: readonly Message[] = [{ role: 'user', content: [textPart('go')] }];
const toolset: Toolset = {
  tools: [{ name: 'add', description: 'Adds.', parameters: { type: 'object' } }],
  handle: (call) => ({ toolCallId: call.id, returnValue: toolOk({ output: 'ok' }) }),
};

/** Records the effective generation options of every step start, and every step's error. */
function recorder(): { starts: GenerationOptions[]; errors: unknown[]; hooks: { name: string; hooks: object } } {
  const starts: GenerationOptions[] = [];
  const errors: unknown[] = [];
  return {
    starts,
    errors,
    hooks: {
      name: 'recorder',
      hooks: {
        onStepStart: (event: StepStartEvent) => void starts.push(event.generation),
        onStepEnd: (event: StepEndEvent) => void errors.push(event.error),
      },
    },
  };
}

describe('generation options through the runtime', () => {
  it('generate() passes the call options to the provider, merged over its own', async () => {
    const provider = new MockChatProvider([textPart('hi')]).withGeneration({ temperature: 0.2, maxOutputTokens: 50 });
    await generate({ provider, systemPrompt: '', history, generation: { temperature: 0.9 } });
    expect(provider.requests.at(-1)!.generation).to.deep.equal({ temperature: 0.9, maxOutputTokens: 50 });
    await generate({ provider, systemPrompt: '', history });
    expect(provider.requests.at(-1)!.generation).to.deep.equal({ temperature: 0.2, maxOutputTokens: 50 });
    expect(provider.generation).to.deep.equal({ temperature: 0.2, maxOutputTokens: 50 }, 'a call never changes the provider');
  });

  it("step() honours per-call options over the provider's, and onStepStart carries the effective ones", async () => {
    const provider = new MockChatProvider([textPart('hi')]).withGeneration({ temperature: 0.2, stopSequences: ['END'] });
    const { starts, hooks } = recorder();
    const generation = { temperature: 1, toolChoice: { type: 'tool', name: 'add' } } as const;
    await step({ provider, systemPrompt: '', toolset, history, generation, hooks: [hooks] });
    const effective = { temperature: 1, stopSequences: ['END'], toolChoice: { type: 'tool', name: 'add' } };
    expect(provider.requests.at(-1)!.generation).to.deep.equal(effective);
    expect(starts).to.deep.equal([effective]);
    expect(Object.isFrozen(starts[0])).to.equal(true);
  });

  it('a bad per-call option fails the step with an InvalidGenerationOptionError before the provider is asked; hooks pair up', async () => {
    const provider = new MockChatProvider([textPart('hi')]);
    const { starts, errors, hooks } = recorder();
    const cases: readonly [GenerationOptions, string][] = [
      [{ temperature: Number.NaN }, 'temperature'],
      [{ toolChoice: { type: 'tool', name: 'missing' } }, 'toolChoice'],
      [{ maxTokens: 5 } as GenerationOptions, 'maxTokens'],
    ];
    for (const [generation, option] of cases) {
      const caught = await step({ provider, systemPrompt: '', toolset, history, generation, hooks: [hooks] }).catch((e: unknown) => e);
      expect(InvalidGenerationOptionError.isInstance(caught), String(caught)).to.equal(true);
      expect(caught).to.include({ option, provider: 'mock' });
    }
    expect(provider.generateCalls).to.equal(0);
    expect(starts).to.have.length(3);
    expect(errors.map((e) => InvalidGenerationOptionError.isInstance(e))).to.deep.equal([true, true, true]);
  });

  it('checks per-call options even when the provider does not (a provider written before them)', async () => {
    const mock = new MockChatProvider([textPart('hi')]);
    const legacy = {
      name: 'legacy',
      modelName: 'legacy',
      thinkingEffort: undefined,
      generate: (...args: Parameters<MockChatProvider['generate']>) => mock.generate(...args),
      withThinking: () => legacy,
    } as unknown as MockChatProvider;
    const caught = await step({ provider: legacy, systemPrompt: '', toolset, history, generation: { topP: 7 } }).catch((e: unknown) => e);
    expect(caught).to.be.instanceOf(InvalidGenerationOptionError).and.include({ provider: 'legacy', option: 'topP' });
    const result = await step({ provider: legacy, systemPrompt: '', toolset, history, generation: { topP: 0.5 } });
    expect(result.message.content).to.deep.equal([textPart('hi')]);
  });

  describe('the agent loop', () => {
    it("merges the turn's options over the agent's for every step, and never retries a refused option", async () => {
      const provider = new ScriptedEchoChatProvider([
        'tool_call: {"id": "c1", "name": "add", "arguments": "{}"}',
        'text: done',
        'text: second turn',
      ]);
      const agent = new Agent({
        systemPrompt: '',
        generation: { temperature: 0.3, maxOutputTokens: 64 },
        step: (options) => step({ ...options, provider, toolset }),
        retry: { initialDelayMs: 1, jitterMs: 0 },
      });
      await agent.run('go', { generation: { temperature: 0.8 } });
      expect(provider.requests.map((r) => r.generation)).to.deep.equal([
        { temperature: 0.8, maxOutputTokens: 64 },
        { temperature: 0.8, maxOutputTokens: 64 },
      ]);
      await agent.run('again');
      expect(provider.requests.at(-1)!.generation).to.deep.equal({ temperature: 0.3, maxOutputTokens: 64 });

      const refusing = new MockChatProvider([textPart('never')], {
        generateError: new UnsupportedGenerationOptionError('mock', 'seed'),
      });
      const failing = new Agent({ systemPrompt: '', step: (options) => step({ ...options, provider: refusing, toolset }), retry: { initialDelayMs: 1, jitterMs: 0 } });
      const caught = await failing.run('go', { generation: { seed: 1 } }).catch((e: unknown) => e);
      expect(UnsupportedGenerationOptionError.isInstance(caught)).to.equal(true);
      expect(refusing.generateCalls).to.equal(1, 'not retried');
    });

    it('a chaos-wrapped provider passes the options on, through retries', async () => {
      const inner = new ScriptedEchoChatProvider(['text: one']);
      const chaos = new ChaosChatProvider(inner, { seed: 1, errorProbability: 0 }).withGeneration({ seed: 42 });
      const agent = new Agent({ systemPrompt: '', step: (options) => step({ ...options, provider: chaos, toolset }) });
      await agent.run('go', { generation: { topP: 0.5 } });
      expect(chaos.requests.map((r) => r.generation)).to.deep.equal([{ seed: 42, topP: 0.5 }]);
      expect(chaos.generation).to.deep.equal({ seed: 42 });
      expect(inner.generation).to.deep.equal({}, 'the wrapped original is not changed');
    });
  });

  describe('the kernel', () => {
    async function kernelWith(provider: MockChatProvider): Promise<Kernel> {
      const kernel = new Kernel();
      await kernel.use(
        definePlugin({ name: 'models', setup: (ctx) => ctx.bindChatProvider('mock', provider) }),
        definePlugin({ name: 'tools', setup: (ctx) => ctx.bindToolset(toolset) }),
      );
      return kernel;
    }

    it('runner.step({ generation }) reaches the provider and the hooks', async () => {
      const provider = new MockChatProvider([textPart('hi')]).withGeneration({ maxOutputTokens: 10 });
      const kernel = await kernelWith(provider);
      const { starts, hooks } = recorder();
      await kernel.runner().step({ systemPrompt: '', history, generation: { parallelToolCalls: false }, hooks: [hooks] });
      expect(provider.requests.at(-1)!.generation).to.deep.equal({ maxOutputTokens: 10, parallelToolCalls: false });
      expect(starts).to.deep.equal([{ maxOutputTokens: 10, parallelToolCalls: false }]);
      await kernel.dispose();
    });

    it('kernel.agent({ generation }) applies to every step, a turn overrides it', async () => {
      const provider = new MockChatProvider([textPart('hi')]);
      const kernel = await kernelWith(provider);
      const agent = kernel.agent({ systemPrompt: '', generation: { temperature: 0 } });
      await agent.run('go');
      await agent.run('go', { generation: { temperature: 0.5, seed: 9 } });
      expect(provider.requests.map((r) => r.generation)).to.deep.equal([{ temperature: 0 }, { temperature: 0.5, seed: 9 }]);
      expect(provider.requests.map((r) => r.historyLength)).to.deep.equal([1, 3]);
      await kernel.dispose();
    });

    it('a refused tool choice reports the tool names the request offers', async () => {
      const provider = new MockChatProvider([toolCall('c', 'add', '{}')]);
      const kernel = await kernelWith(provider);
      const caught = await kernel
        .runner()
        .step({ systemPrompt: '', history, generation: { toolChoice: { type: 'tool', name: 'sub' } } })
        .catch((e: unknown) => e);
      expect((caught as Error).message).to.contain('"sub"').and.contain('"add"');
      await kernel.dispose();
    });
  });
});
