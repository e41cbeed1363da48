import { InvalidGenerationOptionError, step, toolOk, UnsupportedGenerationOptionError, type GenerationOptions, type Tool, type Toolset } from '@kosong/core';
import { expect } from 'chai';

import type { GeminiChatProvider } from '../index.js';
import { textReply } from '../testing/index.js';
import { collect, rejection, user, useServer } from './support.js';

type Body = { generationConfig?: Record<string, unknown>; toolConfig?: unknown };

const add: Tool = { name: 'add', description: 'Adds.', parameters: { type: 'object' } };
const mul: Tool = { name: 'mul', description: 'Multiplies.', parameters: { type: 'object' } };

describe('provider-neutral generation options on the Gemini wire', () => {
  const ctx = useServer();

  async function send(provider: GeminiChatProvider, generation?: GenerationOptions, tools: readonly Tool[] = [add, mul]): Promise<Body> {
    await collect(await provider.generate('', tools, [user('hi')], generation ? { generation } : {}));
    return ctx.server.lastRequest.body as Body;
  }

  it('sends every supported option as its generationConfig field, and toolChoice as a function calling mode', async () => {
    const provider = ctx.provider().withGeneration({
      maxOutputTokens: 512,
      temperature: 0.3,
      topP: 0.8,
      stopSequences: ['END', '\n\n'],
      seed: 11,
      toolChoice: { type: 'tool', name: 'mul' },
      parallelToolCalls: true,
    });
    const body = await send(provider);
    expect(body.generationConfig).to.deep.equal({ maxOutputTokens: 512, temperature: 0.3, topP: 0.8, stopSequences: ['END', '\n\n'], seed: 11 });
    expect(body.toolConfig).to.deep.equal({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['mul'] } });
    for (const [choice, mode] of [['auto', 'AUTO'], ['none', 'NONE'], ['required', 'ANY']] as const) {
      expect((await send(provider, { toolChoice: choice })).toolConfig).to.deep.equal({ functionCallingConfig: { mode } });
    }
  });

  it('sends nothing it was not asked for', async () => {
    const body = await send(ctx.provider());
    expect(body.generationConfig).to.deep.equal({});
    expect(body.toolConfig).to.equal(undefined);
    expect(ctx.provider().generation).to.deep.equal({});
  });

  it("per-call options win over the provider's, field by field, and do not stick", async () => {
    const provider = ctx.provider().withGeneration({ temperature: 0.1, maxOutputTokens: 100 });
    expect((await send(provider, { temperature: 0.9, seed: 1 })).generationConfig).to.deep.equal({ maxOutputTokens: 100, temperature: 0.9, seed: 1 });
    expect((await send(provider)).generationConfig).to.deep.equal({ maxOutputTokens: 100, temperature: 0.1 });
    expect(provider.generation).to.deep.equal({ temperature: 0.1, maxOutputTokens: 100 });
  });

  it("neutral options replace the provider's own config fields; other toolConfig fields stay; [] clears stop sequences", async () => {
    const provider = ctx.provider({
      config: {
        temperature: 1,
        topK: 40,
        stopSequences: ['OLD'],
        toolConfig: { functionCallingConfig: { mode: 'NONE' as never }, retrievalConfig: { languageCode: 'en' } },
      },
    });
    const body = await send(provider, { temperature: 0.2, stopSequences: [], toolChoice: 'required' });
    expect(body.generationConfig).to.deep.equal({ temperature: 0.2, topK: 40 });
    expect(body.toolConfig).to.deep.equal({ functionCallingConfig: { mode: 'ANY' }, retrievalConfig: { languageCode: 'en' } });
    expect((await send(provider)).generationConfig).to.deep.equal({ temperature: 1, topK: 40, stopSequences: ['OLD'] });
  });

  it('without tools, toolChoice auto or none sends no function calling config', async () => {
    expect((await send(ctx.provider(), { toolChoice: 'none' }, [])).toolConfig).to.equal(undefined);
    const keeps = ctx.provider({ config: { toolConfig: { retrievalConfig: { languageCode: 'fr' } } } });
    expect((await send(keeps, { toolChoice: 'auto' }, [])).toolConfig).to.deep.equal({ retrievalConfig: { languageCode: 'fr' } });
  });

  it('refuses what Gemini cannot do, with the typed error, before anything is sent', async () => {
    const parallel = await rejection(ctx.provider().generate('', [add], [user('hi')], { generation: { parallelToolCalls: false } }));
    expect(UnsupportedGenerationOptionError.isInstance(parallel)).to.equal(true);
    expect(parallel).to.include({ option: 'parallelToolCalls', provider: 'google_genai' });
    const stops = await rejection(ctx.provider().withGeneration({ stopSequences: ['a', 'b', 'c', 'd', 'e', 'f'] }).generate('', [], [user('hi')]));
    expect(UnsupportedGenerationOptionError.isInstance(stops)).to.equal(true);
    expect((stops as Error).message).to.match(/at most 5 sequences, got 6/);
    expect(ctx.server.requests).to.have.length(0);
  });

  it('bad values: InvalidGenerationOptionError from withGeneration at once, or per call before sending', async () => {
    expect(() => ctx.provider().withGeneration({ temperature: 3 })).to.throw(InvalidGenerationOptionError, /temperature/);
    const unknownTool = await rejection(ctx.provider().generate('', [add], [user('hi')], { generation: { toolChoice: { type: 'tool', name: 'nope' } } }));
    expect(InvalidGenerationOptionError.isInstance(unknownTool)).to.equal(true);
    expect(ctx.server.requests).to.have.length(0);
  });

  it('step({ generation }) reaches the wire', async () => {
    const toolset: Toolset = { tools: [add], handle: (call) => ({ toolCallId: call.id, returnValue: toolOk({ output: 'x' }) }) };
    ctx.server.reply(textReply(['ok']));
    await step({ provider: ctx.provider(), systemPrompt: '', toolset, history: [user('hi')], generation: { maxOutputTokens: 64, toolChoice: 'none' } });
    const body = ctx.server.lastRequest.body as Body;
    expect(body.generationConfig).to.deep.equal({ maxOutputTokens: 64 });
    expect(body.toolConfig).to.deep.equal({ functionCallingConfig: { mode: 'NONE' } });
  });
});
