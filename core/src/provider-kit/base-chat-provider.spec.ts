import { expect } from 'chai';
import { inspect } from 'node:util';

import type { Message } from '../message/message.js';
import { textPart, type StreamedMessagePart } from '../message/parts.js';
import type { Tool } from '../tooling/tool.js';
import { streamMessage } from '../runtime/stream-message.js';
import {
  BaseChatProvider,
  InvalidGenerationOptionError,
  resolveCallGeneration,
  type GenerationOptions,
  type ProviderChanges,
  type ProviderGenerateOptions,
  type StreamedMessage,
  type ThinkingEffort,
} from './index.js';

const KEY = 'sk-test-0123456789abcdef';

/** A stream of one text part. */
function textStream(text: string): StreamedMessage {
  return {
    id: 'm1',
    usage: undefined,
    finishReason: 'stop',
    async *[Symbol.asyncIterator](): AsyncIterator<StreamedMessagePart> {
      yield textPart(text);
    },
  };
}

/** A provider written on the base: a key, a base URL, an effort mapped like OpenAI's (`max` → `xhigh`), and its calls' options recorded. */
class KitProvider extends BaseChatProvider {
  readonly name = 'kit';
  readonly modelName: string;
  /** The generation options of each call, as `generate` took them. */
  readonly seen: GenerationOptions[] = [];
  private readonly apiKey: string;
  private readonly baseURL: string;

  constructor(model: string, apiKey = KEY, baseURL = 'https://api.example.com/v1') {
    super();
    this.modelName = model;
    this.apiKey = apiKey;
    this.baseURL = baseURL;
  }

  async generate(_systemPrompt: string, tools: readonly Tool[], _history: readonly Message[], options: ProviderGenerateOptions = {}): Promise<StreamedMessage> {
    this.seen.push(this.generationFor(tools, options));
    return textStream('hi');
  }

  protected override thinkingChanges(effort: ThinkingEffort): ProviderChanges {
    return { thinkingEffort: effort === 'max' ? 'xhigh' : effort };
  }

  protected override secrets(): readonly string[] {
    return [this.apiKey];
  }

  protected override describe(): Record<string, unknown> {
    return { baseURL: this.baseURL };
  }
}

/** A provider whose copies get state of their own (like the echo providers' request logs). */
class LoggingProvider extends BaseChatProvider {
  readonly name = 'logging';
  readonly modelName = 'logging';
  readonly log: string[] = [];

  constructor(thinkingEffort?: ThinkingEffort) {
    super({ thinkingEffort });
  }

  async generate(): Promise<StreamedMessage> {
    this.log.push('generate');
    return textStream('logged');
  }

  protected override copyWith(changes: ProviderChanges): this {
    return super.copyWith({ log: [], ...changes });
  }
}

const tool = (name: string): Tool => ({ name, description: name, parameters: { type: 'object' } });

describe('provider kit: BaseChatProvider', () => {
  it('withThinking and withGeneration return copies of the same class; the original is unchanged', () => {
    const provider = new KitProvider('m');
    const thinking = provider.withThinking('max');
    expect(thinking).to.be.instanceOf(KitProvider).and.not.equal(provider);
    expect(thinking.thinkingEffort).to.equal('xhigh', 'mapped by thinkingChanges');
    expect(thinking.modelName).to.equal('m');
    expect(provider.thinkingEffort).to.equal(undefined);

    const configured = thinking.withGeneration({ temperature: 0.5 }).withGeneration({ maxOutputTokens: 9 });
    expect(configured.generation).to.deep.equal({ temperature: 0.5, maxOutputTokens: 9 });
    expect(Object.isFrozen(configured.generation)).to.equal(true);
    expect(configured.thinkingEffort).to.equal('xhigh', 'withGeneration keeps the effort');
    expect(configured.withThinking('low').generation).to.deep.equal({ temperature: 0.5, maxOutputTokens: 9 }, 'withThinking keeps the options');
    expect(thinking.generation).to.deep.equal({});
    expect(provider.generation).to.deep.equal({});
  });

  it('withGeneration refuses a bad value at once, naming the provider', () => {
    const provider = new KitProvider('m');
    expect(() => provider.withGeneration({ temperature: 7 })).to.throw(InvalidGenerationOptionError, /"temperature" \(provider "kit"\)/);
    expect(() => provider.withGeneration({ temprature: 1 } as GenerationOptions)).to.throw(InvalidGenerationOptionError, /unknown option/);
  });

  it('a copy shares the fields it was not given (a client), and a subclass can give its copies state of their own', () => {
    const provider = new KitProvider('m');
    const copy = provider.withThinking('low');
    expect(copy.seen).to.equal(provider.seen, 'shared, like an HTTP client');
    const logging = new LoggingProvider('high');
    expect(logging.thinkingEffort).to.equal('high');
    const other = logging.withGeneration({ seed: 1 });
    expect(other.log).to.not.equal(logging.log);
    expect(other.thinkingEffort).to.equal('high');
  });

  it('toJSON and util.inspect show the name, the model, the described fields and the effort, never a secret', () => {
    const provider = new KitProvider('m', KEY, `https://user:${KEY}@api.example.com/v1?key=${encodeURIComponent(KEY)}`).withThinking('high');
    const json = provider.toJSON();
    expect(Object.keys(json)).to.deep.equal(['name', 'modelName', 'baseURL', 'thinkingEffort']);
    expect(json).to.deep.include({ name: 'kit', modelName: 'm', thinkingEffort: 'high' });
    expect(json['baseURL']).to.equal('https://user:[REDACTED]@api.example.com/v1?key=[REDACTED]');
    for (const shown of [JSON.stringify(provider), inspect(provider, { depth: 10, showHidden: true }), inspect(provider.withGeneration({ seed: 2 })), String(inspect([provider]))]) {
      expect(shown).to.not.contain(KEY).and.not.contain(KEY.slice(3));
    }
    expect(inspect(provider)).to.match(/^KitProvider \{\s+name: 'kit',\s+modelName: 'm',\s+baseURL: 'https:\/\/user:\[REDACTED\]@/);
  });

  describe('generationFor', () => {
    it('takes the options core resolved for the call: nothing is resolved again', async () => {
      const provider = new KitProvider('m').withGeneration({ temperature: 0.2, maxOutputTokens: 5 });
      const tools = [tool('add')];
      const resolvedGeneration = resolveCallGeneration(provider, { temperature: 0.9 }, tools);
      await provider.generate('', tools, [], { generation: { temperature: 0.9 }, resolvedGeneration });
      expect(provider.seen.at(-1)).to.equal(resolvedGeneration.options, 'the very object core resolved');
      expect(resolvedGeneration.options).to.deep.equal({ temperature: 0.9, maxOutputTokens: 5 });
    });

    it('a direct call (no core in between) resolves the options itself, per call winning, and refuses a bad one', async () => {
      const provider = new KitProvider('m').withGeneration({ temperature: 0.2 });
      await provider.generate('', [], [], { generation: { seed: 3 } });
      expect(provider.seen.at(-1)).to.deep.equal({ temperature: 0.2, seed: 3 });
      await provider.generate('', [], []);
      expect(provider.seen.at(-1)).to.deep.equal({ temperature: 0.2 });
      let error: unknown;
      await provider.generate('', [], [], { generation: { toolChoice: 'required' } }).catch((e: unknown) => (error = e));
      expect(InvalidGenerationOptionError.isInstance(error)).to.equal(true);
      expect((error as Error).message).to.match(/"required" but the request has no tools/);
    });

    it('options resolved for other options of the provider, or other tools, are resolved again (a wrapper handing them on)', async () => {
      const inner = new KitProvider('m').withGeneration({ maxOutputTokens: 7 });
      const tools = [tool('add')];
      // resolved for a wrapper whose own options are not the inner provider's
      const forWrapper = resolveCallGeneration({ name: 'wrapper', generation: { temperature: 1 } }, { seed: 4 }, tools);
      await inner.generate('', tools, [], { generation: { seed: 4 }, resolvedGeneration: forWrapper });
      expect(inner.seen.at(-1)).to.deep.equal({ maxOutputTokens: 7, seed: 4 }, "the inner provider's own options, not the wrapper's");
      // resolved for other tools: a named tool choice is checked against the tools the provider got
      const forOtherTools = resolveCallGeneration(inner, { toolChoice: { type: 'tool', name: 'add' } }, tools);
      let error: unknown;
      await inner.generate('', [], [], { generation: { toolChoice: { type: 'tool', name: 'add' } }, resolvedGeneration: forOtherTools }).catch((e: unknown) => (error = e));
      expect(InvalidGenerationOptionError.isInstance(error), String(error)).to.equal(true);
    });

    it('a call like the one before it gets the same resolution again; options changed in place, a tool choice and per-call options are resolved anew', () => {
      const provider = new KitProvider('m').withGeneration({ temperature: 0.2 });
      const tools = [tool('add')];
      const first = resolveCallGeneration(provider, undefined, tools);
      expect(resolveCallGeneration(provider, undefined, tools)).to.equal(first, 'checked, frozen options and the same tools: handed over again');
      expect(Object.isFrozen(first)).to.equal(true);
      expect(resolveCallGeneration(provider, undefined, [...tools])).to.not.equal(first, 'other tools');
      expect(resolveCallGeneration(provider, { seed: 1 }, tools).options).to.deep.equal({ temperature: 0.2, seed: 1 });
      // a provider whose options are a plain object it may change between calls: handed over again only while it has no fields
      const mutable: { name: string; generation: Record<string, unknown> } = { name: 'plain', generation: {} };
      const plain = resolveCallGeneration(mutable, undefined, tools);
      expect(plain.options).to.deep.equal({});
      expect(resolveCallGeneration(mutable, undefined, tools)).to.equal(plain, 'still no fields');
      mutable.generation['temperature'] = 5;
      expect(() => resolveCallGeneration(mutable, undefined, tools)).to.throw(/temperature/, 'changed in place: checked again');
      // a named tool choice is checked against the tools' names on every call (the array may change in place)
      const choosing = new KitProvider('m').withGeneration({ toolChoice: { type: 'tool', name: 'add' } });
      const named = [tool('add')];
      expect(resolveCallGeneration(choosing, undefined, named).options.toolChoice).to.deep.equal({ type: 'tool', name: 'add' });
      named[0] = tool('sub');
      expect(() => resolveCallGeneration(choosing, undefined, named)).to.throw(/names the tool "add"/);
    });

    it('the options object core makes enumerates, spreads and serialises as the plain options, its resolution not among its keys', async () => {
      const provider = new KitProvider('m');
      const signal = new AbortController().signal;
      const seen: ProviderGenerateOptions[] = [];
      const recording = Object.assign(Object.create(provider) as KitProvider, {
        generate: (s: string, t: readonly Tool[], h: readonly Message[], o: ProviderGenerateOptions) => (seen.push(o), provider.generate(s, t, h, o)),
      });
      for (let i = 0; i < 2; i++) await streamMessage({ provider: recording, systemPrompt: '', tools: [], history: [], signal, generation: undefined }, {}).catch(() => undefined);
      for (const options of seen) {
        expect(Object.keys(options)).to.deep.equal(['signal']);
        expect(options).to.deep.equal({ signal });
        expect({ ...options }).to.not.have.property('resolvedGeneration');
        expect(options.resolvedGeneration?.options).to.deep.equal({});
        expect(JSON.stringify(options)).to.equal('{"signal":{}}');
      }
      expect(provider.seen).to.have.length(2);
    });
  });
});
