/**
 * Core resolves a call's generation options once and hands them over (`resolvedGeneration`): a
 * provider on the kit takes them as they are, and a provider written against the contract before
 * (it resolves `generation` itself) keeps working unchanged.
 */
import { expect } from 'chai';

import type { Message } from '../message/message.js';
import { textPart, type StreamedMessagePart } from '../message/parts.js';
import { generate } from '../runtime/generate.js';
import { step } from '../runtime/step.js';
import type { Tool } from '../tooling/tool.js';
import { emptyToolset, type Toolset } from '../tooling/toolset.js';
import {
  BaseChatProvider,
  InvalidGenerationOptionError,
  noGenerationOptions,
  resolveGenerationOptions,
  updateGenerationOptions,
  type ChatProvider,
  type GenerationOptions,
  type ProviderGenerateOptions,
  type StreamedMessage,
  type ThinkingEffort,
} from './index.js';

function textStream(text: string): StreamedMessage {
  return {
    id: undefined,
    usage: undefined,
    finishReason: 'stop',
    async *[Symbol.asyncIterator](): AsyncIterator<StreamedMessagePart> {
      yield textPart(text);
    },
  };
}

/** A provider written against the contract as it was: it knows no `resolvedGeneration` and resolves `generation` itself. */
class OldStyleProvider implements ChatProvider {
  readonly name = 'old-style';
  readonly modelName = 'old';
  readonly calls: { readonly options: ProviderGenerateOptions | undefined; readonly effective: GenerationOptions }[] = [];

  constructor(
    readonly generation: GenerationOptions = noGenerationOptions(),
    readonly thinkingEffort: ThinkingEffort | undefined = undefined,
  ) {}

  async generate(_systemPrompt: string, tools: readonly Tool[], _history: readonly Message[], options?: ProviderGenerateOptions): Promise<StreamedMessage> {
    this.calls.push({ options, effective: resolveGenerationOptions(this.name, this.generation, options?.generation, tools) });
    return textStream('old');
  }

  withThinking(effort: ThinkingEffort): OldStyleProvider {
    return new OldStyleProvider(this.generation, effort);
  }

  withGeneration(options: GenerationOptions): OldStyleProvider {
    return new OldStyleProvider(updateGenerationOptions(this.generation, options, this.name), this.thinkingEffort);
  }
}

/** A provider on the kit. */
class KitProvider extends BaseChatProvider {
  readonly name = 'kit';
  readonly modelName = 'kit';
  readonly seen: { readonly options: ProviderGenerateOptions | undefined; readonly generation: GenerationOptions }[] = [];

  async generate(_systemPrompt: string, tools: readonly Tool[], _history: readonly Message[], options?: ProviderGenerateOptions): Promise<StreamedMessage> {
    this.seen.push({ options, generation: this.generationFor(tools, options) });
    return textStream('kit');
  }
}

const user: Message = { role: 'user', content: [textPart('hi')] };
const lookup: Tool = { name: 'lookup', description: 'looks up', parameters: { type: 'object' } };
const toolset: Toolset = { tools: [lookup], handle: emptyToolset.handle };

async function thrown(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  return expect.fail('expected a rejection');
}

describe('provider kit: the resolved generation options core hands over', () => {
  it('a provider written the old way keeps working: it gets the per-call options as given and resolves them as before', async () => {
    const provider = new OldStyleProvider().withGeneration({ temperature: 0.2, maxOutputTokens: 50 });
    const result = await generate({ provider, systemPrompt: '', history: [user], generation: { temperature: 0.9 } });
    expect(result.message.content).to.deep.equal([textPart('old')]);
    expect(provider.calls[0]!.options?.generation).to.deep.equal({ temperature: 0.9 });
    expect(provider.calls[0]!.effective).to.deep.equal({ temperature: 0.9, maxOutputTokens: 50 });
    const stepped = await step({ provider, systemPrompt: '', toolset, history: [user] });
    expect(stepped.message.content).to.deep.equal([textPart('old')]);
    expect(provider.calls[1]!.options?.generation).to.equal(undefined, 'no per-call options: none given, as before');
    expect(provider.calls[1]!.effective).to.deep.equal({ temperature: 0.2, maxOutputTokens: 50 });
  });

  it('the options object enumerates, serialises and compares as before: the resolved options are not enumerable', async () => {
    const provider = new OldStyleProvider();
    const controller = new AbortController();
    await step({ provider, systemPrompt: '', toolset, history: [user], signal: controller.signal });
    await generate({ provider, systemPrompt: '', history: [user], generation: { seed: 2 } });
    const [withSignal, withGeneration] = provider.calls.map((call) => call.options);
    expect(withSignal).to.deep.equal({ signal: controller.signal });
    expect(Object.keys(withGeneration!)).to.deep.equal(['generation']);
    expect(JSON.stringify(withGeneration)).to.equal('{"generation":{"seed":2}}');
    expect(withGeneration!.resolvedGeneration?.options).to.deep.equal({ seed: 2 }, 'there for a provider that reads it');
    expect({ ...withGeneration }).to.not.have.property('resolvedGeneration');
  });

  it('a bad per-call option fails before an old-style provider is called, as before', async () => {
    const provider = new OldStyleProvider();
    const error = await thrown(generate({ provider, systemPrompt: '', history: [user], generation: { topP: 3 } }));
    expect(InvalidGenerationOptionError.isInstance(error)).to.equal(true);
    expect(provider.calls).to.have.length(0);
  });

  it('a kit provider takes what core resolved, once, for generate and for step', async () => {
    const provider = new KitProvider().withGeneration({ seed: 1, temperature: 0.5 });
    await generate({ provider, systemPrompt: '', history: [user], generation: { temperature: 1 } });
    await step({ provider, systemPrompt: '', toolset, history: [user], generation: { toolChoice: { type: 'tool', name: 'lookup' } } });
    await step({ provider, systemPrompt: '', toolset, history: [user] });
    expect(provider.seen.map((call) => call.generation)).to.deep.equal([
      { seed: 1, temperature: 1 },
      { seed: 1, temperature: 0.5, toolChoice: { type: 'tool', name: 'lookup' } },
      { seed: 1, temperature: 0.5 },
    ]);
    for (const call of provider.seen) {
      const resolved = call.options?.resolvedGeneration;
      expect(resolved, 'core hands the resolved options over').to.not.equal(undefined);
      expect(call.generation).to.equal(resolved!.options, 'the very object core resolved: not resolved again');
      expect(resolved!.configured).to.equal(provider.generation);
      expect(Object.isFrozen(resolved!.options)).to.equal(true);
    }
  });

  it('a named tool the step does not offer is refused before the provider is called', async () => {
    const provider = new KitProvider();
    const error = await thrown(step({ provider, systemPrompt: '', toolset, history: [user], generation: { toolChoice: { type: 'tool', name: 'missing' } } }));
    expect(InvalidGenerationOptionError.isInstance(error)).to.equal(true);
    expect((error as Error).message).to.match(/names the tool "missing", but the request's tools are "lookup"/);
    expect(provider.seen).to.have.length(0);
  });

  it('a wrapper that hands the options on to a provider of its own keeps that provider resolving its own options', async () => {
    const inner = new KitProvider().withGeneration({ maxOutputTokens: 3 });
    // like a router: its options are not the inner provider's
    const wrapper: ChatProvider = {
      name: 'wrapper',
      modelName: 'wrapper',
      thinkingEffort: undefined,
      generation: Object.freeze({ temperature: 0.1 }),
      generate: (systemPrompt, tools, history, options) => inner.generate(systemPrompt, tools, history, options),
      withThinking: () => wrapper,
      withGeneration: () => wrapper,
    };
    await generate({ provider: wrapper, systemPrompt: '', history: [user], generation: { seed: 8 } });
    expect(inner.seen[0]!.generation).to.deep.equal({ maxOutputTokens: 3, seed: 8 });
  });
});
