/**
 * The call options, option by option: tools, the neutral generation options, `toolChoice`,
 * `parallelToolCalls`, structured output, thinking, provider options and headers, read back from
 * what the model's `doStream` was given; and the refusals.
 */
import { ChatProviderError, generate, structuredOutput, UnsupportedGenerationOptionError, UnsupportedOutputError, type Tool } from '@kosong/core';
import { expect } from 'chai';
import { z } from 'zod';

import { aiSdkProvider, type AiSdkProviderOptions } from '../ai-sdk-provider.js';
import type { AiSdkLanguageModel } from '../language-model.js';
import type { LanguageModelV4CallOptions } from '../spec-v4.js';
import { collect, finish, GO, modelV2, modelV3, modelV4, modelWith, rejection, streamOf, textBlock } from './support.js';

const LOOKUP: Tool = { name: 'lookup', description: 'Looks up.', parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } };
const ANSWER = [...textBlock('t', 'ok'), finish()];

/** The options of one call through the bridge, with a v4 mock of this provider id. */
async function sent(setup: (provider: ReturnType<typeof aiSdkProvider>) => Promise<unknown>, options: AiSdkProviderOptions = {}, providerId = 'mock.chat'): Promise<LanguageModelV4CallOptions> {
  const model = modelWith(async () => ({ stream: streamOf(ANSWER) }), providerId, 'm');
  await setup(aiSdkProvider(model, options));
  return model.doStreamCalls[0]!;
}

const once = (generation: object, tools: readonly Tool[] = [LOOKUP]) => async (provider: ReturnType<typeof aiSdkProvider>) => collect(await provider.generate('', tools, GO, { generation }));

describe('aiSdkProvider: the call options', () => {
  it('function tools with their JSON Schema; none without tools', async () => {
    expect((await sent(once({}))).tools).to.deep.equal([{ type: 'function', name: 'lookup', description: 'Looks up.', inputSchema: LOOKUP.parameters }]);
    expect((await sent(once({}, []))).tools).to.equal(undefined);
  });

  it('the neutral generation options as the spec names them, per call over the provider\'s', async () => {
    const call = await sent((provider) =>
      once({ temperature: 0.5, stopSequences: ['END'], seed: 3 })(provider.withGeneration({ maxOutputTokens: 64, topP: 0.9, temperature: 1 })),
    );
    expect(call).to.include({ maxOutputTokens: 64, temperature: 0.5, topP: 0.9, seed: 3 });
    expect(call.stopSequences).to.deep.equal(['END']);
    expect(call.abortSignal).to.be.an.instanceOf(AbortSignal);
  });

  for (const [choice, expected] of [
    ['auto', { type: 'auto' }],
    ['none', { type: 'none' }],
    ['required', { type: 'required' }],
    [{ type: 'tool', name: 'lookup' }, { type: 'tool', toolName: 'lookup' }],
  ] as const) {
    it(`toolChoice ${JSON.stringify(choice)} → ${JSON.stringify(expected)}`, async () => {
      expect((await sent(once({ toolChoice: choice }))).toolChoice).to.deep.equal(expected);
    });
  }

  for (const [providerId, expected] of [
    ['openai.chat', { openai: { parallelToolCalls: false } }],
    ['openai.responses', { openai: { parallelToolCalls: false } }],
    ['groq.chat', { groq: { parallelToolCalls: false } }],
    ['anthropic.messages', { anthropic: { disableParallelToolUse: true } }],
  ] as const) {
    it(`parallelToolCalls: false for ${providerId} → providerOptions ${JSON.stringify(expected)}`, async () => {
      expect((await sent(once({ parallelToolCalls: false }), {}, providerId)).providerOptions).to.deep.equal(expected);
    });
  }

  it('parallelToolCalls for a provider not known to take it: an UnsupportedGenerationOptionError before any call', async () => {
    const model = modelV4(ANSWER);
    const caught = await rejection(aiSdkProvider(model).generate('', [LOOKUP], GO, { generation: { parallelToolCalls: true } }));
    expect(UnsupportedGenerationOptionError.isInstance(caught), String(caught)).to.equal(true);
    expect(caught).to.include({ option: 'parallelToolCalls', provider: 'ai-sdk' });
    expect(model.doStreamCalls).to.have.length(0);
  });

  it('structured output: responseFormat json with the JSON Schema, its name and description', async () => {
    const model = modelV4([...textBlock('t', '{"city":"Paris"}'), finish()]);
    const result = await generate({ provider: aiSdkProvider(model), systemPrompt: '', history: [...GO], output: structuredOutput(z.object({ city: z.string() }), { name: 'place', description: 'A city.' }) });
    expect(result.output).to.deep.equal({ city: 'Paris' });
    const format = model.doStreamCalls[0]!.responseFormat as { type: string; name: string; description?: string; schema: { properties: object } };
    expect(format).to.include({ type: 'json', name: 'place', description: 'A city.' });
    expect(Object.keys(format.schema.properties)).to.deep.equal(['city']);
  });

  it('providerOptions: passed through as given, or made per call by a function', async () => {
    expect((await sent(once({}), { providerOptions: { openai: { reasoningSummary: 'auto' } } })).providerOptions).to.deep.equal({ openai: { reasoningSummary: 'auto' } });
    const seen: unknown[] = [];
    const call = await sent(once({ temperature: 0 }), {
      providerOptions: (request) => {
        seen.push([request.tools.map((tool) => tool.name), request.generation, request.history.length]);
        return { anthropic: { cacheControl: { type: 'ephemeral' } } };
      },
    });
    expect(call.providerOptions).to.deep.equal({ anthropic: { cacheControl: { type: 'ephemeral' } } });
    expect(seen).to.deep.equal([[['lookup'], { temperature: 0 }, 1]]);
  });

  it('withProviderOptions: a copy with other provider options; the original keeps its own', async () => {
    const model = modelV4(ANSWER, ANSWER);
    const original = aiSdkProvider(model, { providerOptions: { openai: { user: 'a' } } });
    const copy = original.withProviderOptions({ openai: { user: 'b' } });
    await collect(await copy.generate('', [], GO));
    await collect(await original.generate('', [], GO));
    expect(model.doStreamCalls.map((call) => call.providerOptions)).to.deep.equal([{ openai: { user: 'b' } }, { openai: { user: 'a' } }]);
  });

  it('parallelToolCalls and the given provider options merge, per provider (the given ones win)', async () => {
    const call = await sent(once({ parallelToolCalls: true }), { providerOptions: { openai: { store: false } } }, 'openai.chat');
    expect(call.providerOptions).to.deep.equal({ openai: { parallelToolCalls: true, store: false } });
  });

  it('thinking: a v4 model gets the `reasoning` field (off → none); the `thinking` option maps the effort instead', async () => {
    expect((await sent(async (provider) => collect(await provider.withThinking('high').generate('', [], GO)))).reasoning).to.equal('high');
    expect((await sent(async (provider) => collect(await provider.withThinking('off').generate('', [], GO)))).reasoning).to.equal('none');
    const mapped = await sent(async (provider) => collect(await provider.withThinking('low').generate('', [], GO)), {
      thinking: (effort) => ({ anthropic: { thinking: { type: 'enabled', budgetTokens: effort === 'low' ? 1024 : 8192 } } }),
    });
    expect(mapped.reasoning).to.equal(undefined);
    expect(mapped.providerOptions).to.deep.equal({ anthropic: { thinking: { type: 'enabled', budgetTokens: 1024 } } });
    expect((await sent(once({}))).reasoning).to.equal(undefined);
  });

  it('thinking: a v3 or v2 model has no field for it, and refuses an effort without the `thinking` option', async () => {
    for (const model of [modelV3([]), modelV2([])] as AiSdkLanguageModel[]) {
      const caught = await rejection(aiSdkProvider(model).withThinking('high').generate('', [], GO));
      expect(ChatProviderError.isInstance(caught)).to.equal(true);
      expect((caught as Error).message).to.match(/spec v[23].*`thinking` option/);
    }
    const v3 = modelV3([{ type: 'text-delta', id: 't', delta: 'ok' }, finish()] as never);
    await collect(await aiSdkProvider(v3, { thinking: () => ({ mock: { think: true } }) }).withThinking('high').generate('', [], GO));
    expect(v3.doStreamCalls[0]!.providerOptions).to.deep.equal({ mock: { think: true } });
  });

  it('settings the spec has and kosong has no neutral option for (topK, penalties) go as they are', async () => {
    const call = await sent(once({}), { settings: { topK: 40, presencePenalty: 0.5, frequencyPenalty: undefined } });
    expect(call).to.include({ topK: 40, presencePenalty: 0.5 });
    expect(call).not.to.have.property('frequencyPenalty');
  });

  it('headers of the provider go with every call', async () => {
    expect((await sent(once({}), { headers: { 'x-team': 'search' } })).headers).to.deep.equal({ 'x-team': 'search' });
  });

  it('an option the model says it dropped (a stream-start warning) is refused: UnsupportedGenerationOptionError / UnsupportedOutputError', async () => {
    const dropping = (feature: string) =>
      modelV4([{ type: 'stream-start', warnings: [{ type: 'unsupported', feature, details: `${feature} is not supported` }] }, ...ANSWER]);
    const seed = await rejection(aiSdkProvider(dropping('seed')).generate('', [], GO, { generation: { seed: 1 } }).then(collect));
    expect(UnsupportedGenerationOptionError.isInstance(seed), String(seed)).to.equal(true);
    expect(seed).to.include({ option: 'seed' });
    expect((seed as Error).message).to.contain('seed is not supported');
    const format = await rejection(generate({ provider: aiSdkProvider(dropping('responseFormat')), systemPrompt: '', history: [...GO], output: z.object({ a: z.string() }) }));
    expect(UnsupportedOutputError.isInstance(format), String(format)).to.equal(true);
    // a warning about an option the call did not set is no refusal (it is kept on the stream)
    const stream = await aiSdkProvider(dropping('topK')).generate('', [], GO);
    await collect(stream);
    expect(stream.warnings).to.deep.equal([{ type: 'unsupported', feature: 'topK', details: 'topK is not supported' }]);
  });

  it('v2 warnings (unsupported-setting) refuse the same way', async () => {
    const model = modelV2([
      { type: 'stream-start', warnings: [{ type: 'unsupported-setting', setting: 'temperature' }] },
      { type: 'finish', finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } },
    ]);
    const caught = await rejection(aiSdkProvider(model).generate('', [], GO, { generation: { temperature: 0.2 } }).then(collect));
    expect(caught).to.include({ option: 'temperature' });
  });
});
