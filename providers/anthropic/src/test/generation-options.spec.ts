import { InvalidGenerationOptionError, step, toolOk, UnsupportedGenerationOptionError, type GenerationOptions, type Tool, type Toolset } from '@kosong/core';
import { expect } from 'chai';

import type { AnthropicChatProvider, AnthropicChatProviderOptions } from '../index.js';
import { collect, providerFor, rejection, user, useServer } from './support.js';

type Body = Record<string, unknown>;

const add: Tool = { name: 'add', description: 'Adds.', parameters: { type: 'object' } };
const mul: Tool = { name: 'mul', description: 'Multiplies.', parameters: { type: 'object' } };
const FIELDS = ['max_tokens', 'temperature', 'top_p', 'top_k', 'stop_sequences', 'tool_choice', 'seed'];

describe('AnthropicChatProvider with the neutral generation options, on the wire', () => {
  const ctx = useServer();
  const provider = (options: Partial<AnthropicChatProviderOptions> = {}): AnthropicChatProvider => providerFor(ctx.server, options);
  /** The old API version, which still has sampling parameters. */
  const sampling = (options: Partial<AnthropicChatProviderOptions> = {}): AnthropicChatProvider => provider({ apiVersion: '2023-06-01', ...options });

  async function send(chat: AnthropicChatProvider, generation?: GenerationOptions, tools: readonly Tool[] = [add, mul]): Promise<Body> {
    await collect(await chat.generate('', tools, [user('hi')], generation ? { generation } : {}));
    const body = ctx.server.lastRequest.body as Body;
    return Object.fromEntries(FIELDS.filter((name) => name in body).map((name) => [name, body[name]]));
  }

  async function refusal(chat: AnthropicChatProvider, generation: GenerationOptions, tools: readonly Tool[] = [add, mul]): Promise<UnsupportedGenerationOptionError> {
    const error = await rejection(chat.generate('', tools, [user('hi')], { generation }));
    expect(UnsupportedGenerationOptionError.isInstance(error), String(error)).to.equal(true);
    expect(ctx.server.requests).to.have.length(0);
    return error as UnsupportedGenerationOptionError;
  }

  it('sends max_tokens from defaultMaxTokens, and nothing else it was not asked for', async () => {
    expect(await send(provider())).to.deep.equal({ max_tokens: 1024 });
    expect(provider().generation).to.deep.equal({});
    expect(ctx.server.lastRequest.headers['anthropic-version']).to.equal('2026-10-21');
  });

  it('maps maxOutputTokens, stopSequences, toolChoice and parallelToolCalls', async () => {
    const chat = provider().withGeneration({ maxOutputTokens: 512, stopSequences: ['END', '\n\nHuman:'], toolChoice: { type: 'tool', name: 'mul' }, parallelToolCalls: false });
    expect(await send(chat)).to.deep.equal({
      max_tokens: 512,
      stop_sequences: ['END', '\n\nHuman:'],
      tool_choice: { type: 'tool', name: 'mul', disable_parallel_tool_use: true },
    });
    expect((await send(chat, { toolChoice: 'required' }))['tool_choice']).to.deep.equal({ type: 'any', disable_parallel_tool_use: true });
    expect((await send(chat, { toolChoice: 'auto' }))['tool_choice']).to.deep.equal({ type: 'auto', disable_parallel_tool_use: true });
    expect((await send(chat, { toolChoice: 'none' }))['tool_choice']).to.deep.equal({ type: 'none' });
    expect((await send(provider(), { parallelToolCalls: false }))['tool_choice']).to.deep.equal({ type: 'auto', disable_parallel_tool_use: true });
    expect(await send(provider(), { parallelToolCalls: true })).to.not.have.property('tool_choice');
    expect(await send(chat, { stopSequences: [] })).to.not.have.property('stop_sequences');
  });

  it('sends no tool_choice without tools (auto and none mean nothing there)', async () => {
    expect(await send(provider(), { toolChoice: 'none', parallelToolCalls: false }, [])).to.deep.equal({ max_tokens: 1024 });
    expect(await send(provider(), { toolChoice: 'auto' }, [])).to.deep.equal({ max_tokens: 1024 });
  });

  it("per-call options win over the provider's, field by field, and do not stick", async () => {
    const chat = provider().withGeneration({ maxOutputTokens: 100, stopSequences: ['A'] });
    expect(await send(chat, { maxOutputTokens: 200 })).to.deep.equal({ max_tokens: 200, stop_sequences: ['A'] });
    expect(await send(chat)).to.deep.equal({ max_tokens: 100, stop_sequences: ['A'] });
    expect(chat.generation).to.deep.equal({ maxOutputTokens: 100, stopSequences: ['A'] });
  });

  it('withGeneration merges, keeps thinking and leaves the original unchanged; bad values fail at once', () => {
    const base = provider().withThinking('low').withGeneration({ maxOutputTokens: 10 });
    const more = base.withGeneration({ stopSequences: ['X'] });
    expect(more.generation).to.deep.equal({ maxOutputTokens: 10, stopSequences: ['X'] });
    expect(more.thinkingEffort).to.equal('low');
    expect(base.generation).to.deep.equal({ maxOutputTokens: 10 });
    expect(() => base.withGeneration({ maxOutputTokens: 0 })).to.throw(InvalidGenerationOptionError, /maxOutputTokens.*anthropic/);
    expect(() => base.withGeneration({ topK: 5 } as GenerationOptions)).to.throw(InvalidGenerationOptionError, /topK/);
  });

  describe('what the API cannot take is an UnsupportedGenerationOptionError before any request', () => {
    it('seed: the API has none', async () => {
      const error = await refusal(provider(), { seed: 7 });
      expect(error).to.include({ option: 'seed', provider: 'anthropic' });
    });

    it('temperature and topP on the SDK’s API version (2026-10-21 has no sampling parameters)', async () => {
      expect((await refusal(provider(), { temperature: 0.5 })).message).to.match(/temperature.*2026-10-21 has no sampling parameters.*apiVersion: '2023-06-01'/);
      expect(await refusal(provider(), { topP: 0.9 })).to.include({ option: 'topP' });
      expect(await refusal(provider({ apiVersion: '2026-10-21' }), { temperature: 1 })).to.include({ option: 'temperature' });
    });

    it('a temperature above 1 (the API takes 0 to 1)', async () => {
      expect((await refusal(sampling(), { temperature: 1.5 })).message).to.match(/0 to 1/);
    });

    it('sampling that thinking does not allow: a temperature other than 1, a top_p under 0.95', async () => {
      const thinking = sampling().withThinking('medium');
      expect((await refusal(thinking, { temperature: 0.2 })).message).to.match(/with thinking on/);
      expect((await refusal(thinking, { topP: 0.5 })).message).to.match(/0\.95 to 1/);
    });

    it('forced tool use while thinking (required, or a named tool)', async () => {
      const thinking = provider({ model: 'claude-opus-4-7' }).withThinking('high');
      expect((await refusal(thinking, { toolChoice: 'required' })).message).to.match(/only "auto" or "none"/);
      expect(await refusal(thinking, { toolChoice: { type: 'tool', name: 'add' } })).to.include({ option: 'toolChoice' });
    });
  });

  it("with apiVersion '2023-06-01': temperature and top_p go out, with that anthropic-version header", async () => {
    expect(await send(sampling(), { temperature: 0.7, topP: 0.9, maxOutputTokens: 2048 })).to.deep.equal({ max_tokens: 2048, temperature: 0.7, top_p: 0.9 });
    expect(ctx.server.lastRequest.headers['anthropic-version']).to.equal('2023-06-01');
    const thinking = sampling().withThinking('low');
    expect(await send(thinking, { temperature: 1, topP: 0.95, toolChoice: 'auto' })).to.deep.equal({ max_tokens: 1024, temperature: 1, top_p: 0.95, tool_choice: { type: 'auto' } });
    expect(await send(sampling().withThinking('off'), { temperature: 0.2, toolChoice: 'required' })).to.deep.equal({ max_tokens: 1024, temperature: 0.2, tool_choice: { type: 'any' } });
  });

  it('a toolChoice naming a tool the request lacks is an InvalidGenerationOptionError', async () => {
    const error = await rejection(provider().generate('', [add], [user('hi')], { generation: { toolChoice: { type: 'tool', name: 'nope' } } }));
    expect(InvalidGenerationOptionError.isInstance(error)).to.equal(true);
    expect(ctx.server.requests).to.have.length(0);
  });

  it('step({ generation }) reaches the wire', async () => {
    const toolset: Toolset = { tools: [add], handle: (call) => ({ toolCallId: call.id, returnValue: toolOk({ output: 'ok' }) }) };
    await step({ provider: provider(), systemPrompt: '', toolset, history: [user('hi')], generation: { maxOutputTokens: 77, toolChoice: 'none' } });
    const body = ctx.server.lastRequest.body as Body;
    expect([body['max_tokens'], body['tool_choice']]).to.deep.equal([77, { type: 'none' }]);
  });
});
