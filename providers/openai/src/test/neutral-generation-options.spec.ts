import {
  InvalidGenerationOptionError,
  step,
  toolOk,
  UnsupportedGenerationOptionError,
  type GenerationOptions,
  type Tool,
  type Toolset,
} from '@kosong/core';
import type { GenerationOptionName } from '@kosong/core/provider-kit';
import { expect } from 'chai';

import { KimiChatProvider, OpenAIChatProvider, type OpenAIChatProviderOptions } from '../index.js';
import { collect, rejection, TEST_KEY, user, useServer } from './support.js';

type Body = Record<string, unknown>;

const add: Tool = { name: 'add', description: 'Adds.', parameters: { type: 'object' } };
const mul: Tool = { name: 'mul', description: 'Multiplies.', parameters: { type: 'object' } };

describe('provider-neutral generation options on the wire', () => {
  const ctx = useServer();

  async function send(
    provider: KimiChatProvider | OpenAIChatProvider,
    generation?: GenerationOptions,
    tools: readonly Tool[] = [add, mul],
  ): Promise<Body> {
    await collect(await provider.generate('', tools, [user('hi')], generation ? { generation } : {}));
    return ctx.server.lastRequest.body as Body;
  }

  /** The options' fields in a body, without the rest. */
  function fields(body: Body, names: readonly string[]): Body {
    return Object.fromEntries(names.filter((n) => n in body).map((n) => [n, body[n]]));
  }
  const GENERATION_FIELDS = ['max_completion_tokens', 'max_tokens', 'temperature', 'top_p', 'stop', 'seed', 'tool_choice', 'parallel_tool_calls'];

  describe('OpenAIChatProvider', () => {
    const openai = (options: Partial<OpenAIChatProviderOptions> = {}): OpenAIChatProvider =>
      new OpenAIChatProvider({ baseURL: ctx.server.baseURL, apiKey: TEST_KEY, model: 'gpt-4.1', ...options });

    it('sends every neutral option as its Chat Completions field', async () => {
      const provider = openai().withGeneration({
        maxOutputTokens: 512,
        temperature: 0.3,
        topP: 0.8,
        stopSequences: ['END', '\n\n'],
        seed: 11,
        toolChoice: { type: 'tool', name: 'mul' },
        parallelToolCalls: false,
      });
      expect(fields(await send(provider), GENERATION_FIELDS)).to.deep.equal({
        max_completion_tokens: 512,
        temperature: 0.3,
        top_p: 0.8,
        stop: ['END', '\n\n'],
        seed: 11,
        tool_choice: { type: 'function', function: { name: 'mul' } },
        parallel_tool_calls: false,
      });
      for (const choice of ['auto', 'none', 'required'] as const) {
        expect((await send(provider, { toolChoice: choice }))['tool_choice']).to.equal(choice);
      }
    });

    it('sends nothing it was not asked for', async () => {
      expect(fields(await send(openai()), GENERATION_FIELDS)).to.deep.equal({});
      expect(openai().generation).to.deep.equal({});
    });

    it("per-call options win over the provider's, field by field, and do not stick", async () => {
      const provider = openai().withGeneration({ temperature: 0.1, maxOutputTokens: 100 });
      expect(fields(await send(provider, { temperature: 0.9, seed: 1 }), GENERATION_FIELDS)).to.deep.equal({ max_completion_tokens: 100, temperature: 0.9, seed: 1 });
      expect(fields(await send(provider), GENERATION_FIELDS)).to.deep.equal({ max_completion_tokens: 100, temperature: 0.1 });
      expect(provider.generation).to.deep.equal({ temperature: 0.1, maxOutputTokens: 100 });
    });

    it('withGeneration merges over earlier calls and leaves the original unchanged', async () => {
      const base = openai().withGeneration({ temperature: 0.1, stopSequences: ['A'] });
      const more = base.withGeneration({ seed: 5, stopSequences: [] });
      expect(base.generation).to.deep.equal({ temperature: 0.1, stopSequences: ['A'] });
      expect(more.generation).to.deep.equal({ temperature: 0.1, seed: 5, stopSequences: [] });
      expect(fields(await send(more), GENERATION_FIELDS)).to.deep.equal({ temperature: 0.1, seed: 5 }, '[] clears the stop sequences');
      expect(more.withThinking('high').generation).to.deep.equal(more.generation, 'withThinking keeps them');
    });

    it("neutral options replace the provider's own for the same field; extraBody still wins over both", async () => {
      const provider = openai({
        generation: { temperature: 0.5, maxCompletionTokens: 50, maxTokens: 60, stop: 'OLD', presencePenalty: 0.4, extraBody: { seed: 99 } },
      }).withGeneration({ temperature: 1.5, maxOutputTokens: 70, stopSequences: ['NEW'], seed: 3 });
      const body = await send(provider);
      expect(fields(body, [...GENERATION_FIELDS, 'presence_penalty'])).to.deep.equal({
        max_completion_tokens: 70,
        temperature: 1.5,
        stop: ['NEW'],
        seed: 99,
        presence_penalty: 0.4,
      });
    });

    it('maxOutputTokensField: max_tokens sends the cap as max_tokens (for servers that know no other)', async () => {
      const provider = openai({ maxOutputTokensField: 'max_tokens', generation: { maxCompletionTokens: 9 } });
      expect(fields(await send(provider, { maxOutputTokens: 300 }), GENERATION_FIELDS)).to.deep.equal({ max_tokens: 300 });
    });

    it('without tools, sends no parallel_tool_calls and no tool_choice auto/none (the API refuses them there)', async () => {
      const provider = openai().withGeneration({ parallelToolCalls: true, toolChoice: 'auto', temperature: 1 });
      const body = await send(provider, undefined, []);
      expect(fields(body, GENERATION_FIELDS)).to.deep.equal({ temperature: 1 });
      expect(body).to.not.have.property('tools');
      expect((await send(provider, { toolChoice: 'none' }, []))).to.not.have.property('tool_choice');
    });

    it('refuses a fifth stop sequence with an UnsupportedGenerationOptionError, before any request', async () => {
      const before = ctx.server.requests.length;
      const error = await rejection(openai().generate('', [], [user('hi')], { generation: { stopSequences: ['a', 'b', 'c', 'd', 'e'] } }));
      expect(UnsupportedGenerationOptionError.isInstance(error), String(error)).to.equal(true);
      expect(error).to.include({ provider: 'openai', option: 'stopSequences' });
      expect((error as Error).message).to.contain('at most 4');
      expect(ctx.server.requests.length).to.equal(before);
    });

    it('refuses bad values and unknown tools with an InvalidGenerationOptionError naming the provider', async () => {
      expect(() => openai().withGeneration({ temperature: 3 })).to.throw(InvalidGenerationOptionError, '"temperature" (provider "openai")');
      const error = await rejection(openai().generate('', [add], [user('hi')], { generation: { toolChoice: { type: 'tool', name: 'mul' } } }));
      expect(error).to.be.instanceOf(InvalidGenerationOptionError).and.include({ option: 'toolChoice', provider: 'openai' });
      expect(ctx.server.requests).to.have.length(0);
    });

    it('step({ generation }) reaches the wire', async () => {
      const toolset: Toolset = { tools: [add], handle: (call) => ({ toolCallId: call.id, returnValue: toolOk({ output: '' }) }) };
      const result = await step({ provider: openai(), systemPrompt: '', toolset, history: [user('hi')], generation: { maxOutputTokens: 8, toolChoice: 'none' } });
      expect(result.message.content[0]).to.deep.include({ type: 'text' });
      expect(fields(ctx.server.lastRequest.body as Body, GENERATION_FIELDS)).to.deep.equal({ max_completion_tokens: 8, tool_choice: 'none' });
    });
  });

  describe('KimiChatProvider', () => {
    const kimi = (): KimiChatProvider => new KimiChatProvider({ baseURL: ctx.server.baseURL, apiKey: TEST_KEY, model: 'kimi-k2-turbo-preview' });

    it('sends what the Moonshot API takes: max_completion_tokens, temperature, top_p, stop, tool_choice', async () => {
      const provider = kimi().withGeneration({ maxOutputTokens: 2048, temperature: 0.6, topP: 0.95, stopSequences: ['END'], toolChoice: { type: 'tool', name: 'add' } });
      expect(fields(await send(provider), GENERATION_FIELDS)).to.deep.equal({
        max_completion_tokens: 2048,
        temperature: 0.6,
        top_p: 0.95,
        stop: ['END'],
        tool_choice: { type: 'function', function: { name: 'add' } },
      });
      expect(fields(await send(provider, { toolChoice: 'required' }), ['tool_choice'])).to.deep.equal({ tool_choice: 'required' });
    });

    it("replaces the provider's own cap (maxTokens alias included) and per-call wins", async () => {
      const provider = new KimiChatProvider({ baseURL: ctx.server.baseURL, apiKey: TEST_KEY, model: 'k', generation: { maxTokens: 8000, temperature: 0.2 } });
      expect(fields(await send(provider, { maxOutputTokens: 1024 }), GENERATION_FIELDS)).to.deep.equal({ max_completion_tokens: 1024, temperature: 0.2 });
      expect(fields(await send(provider), GENERATION_FIELDS)).to.deep.equal({ max_completion_tokens: 8000, temperature: 0.2 });
    });

    const unsupported: readonly [string, GenerationOptions, GenerationOptionName, string?][] = [
      ['a seed', { seed: 1 }, 'seed'],
      ['parallelToolCalls', { parallelToolCalls: false }, 'parallelToolCalls'],
      ['a temperature above 1', { temperature: 1.2 }, 'temperature', 'from 0 to 1'],
      ['a sixth stop sequence', { stopSequences: ['1', '2', '3', '4', '5', '6'] }, 'stopSequences', 'at most 5'],
      ['a stop sequence over 32 bytes', { stopSequences: ['é'.repeat(17)] }, 'stopSequences', '32 bytes, got 34'],
    ];
    for (const [what, generation, option, detail] of unsupported) {
      it(`refuses ${what} with an UnsupportedGenerationOptionError, before any request`, async () => {
        const error = await rejection(kimi().generate('', [add], [user('hi')], { generation }));
        expect(UnsupportedGenerationOptionError.isInstance(error), String(error)).to.equal(true);
        expect(error).to.include({ provider: 'kimi', option });
        if (detail !== undefined) expect((error as Error).message).to.contain(detail);
        const configured = await rejection(kimi().withGeneration(generation).generate('', [add], [user('hi')]));
        expect(UnsupportedGenerationOptionError.isInstance(configured)).to.equal(true, 'configured on the provider: refused at call time too');
        expect(ctx.server.requests).to.have.length(0);
      });
    }

    it('refuses tool_choice "required" or a named tool while thinking is enabled (the API refuses the pair), allows auto/none', async () => {
      const thinking = kimi().withThinking('high');
      for (const toolChoice of ['required', { type: 'tool', name: 'add' }] as const) {
        const error = await rejection(thinking.generate('', [add], [user('hi')], { generation: { toolChoice } }));
        expect(error).to.be.instanceOf(UnsupportedGenerationOptionError).and.include({ option: 'toolChoice' });
        expect((error as Error).message).to.contain('thinking is enabled');
      }
      expect((await send(thinking, { toolChoice: 'auto' }))['tool_choice']).to.equal('auto');
      expect((await send(kimi().withThinking('off'), { toolChoice: 'required' }))['tool_choice']).to.equal('required');
    });

    it('keeps extraBody last and the thinking switch untouched', async () => {
      const provider = kimi().withThinking('off').withExtraBody({ temperature: 0.9 }).withGeneration({ temperature: 0.3, maxOutputTokens: 5 });
      const body = await send(provider);
      expect(fields(body, GENERATION_FIELDS)).to.deep.equal({ temperature: 0.9, max_completion_tokens: 5 });
      expect(body['thinking']).to.deep.equal({ type: 'disabled' });
      expect(provider.withThinking('high').generation).to.deep.equal({ temperature: 0.3, maxOutputTokens: 5 });
    });
  });

  it('a step with a refused option fails with the typed error, naming option and provider', async () => {
    const provider = new KimiChatProvider({ baseURL: ctx.server.baseURL, apiKey: TEST_KEY, model: 'k' });
    const toolset: Toolset = { tools: [], handle: (call) => ({ toolCallId: call.id, returnValue: toolOk({ output: '' }) }) };
    const caught = await step({ provider, systemPrompt: '', toolset, history: [user('hi')], generation: { seed: 4 } }).catch((e: unknown) => e);
    expect((caught as Error).message).to.equal('Provider "kimi" does not support the generation option "seed".');
    expect(ctx.server.requests).to.have.length(0);
  });
});
