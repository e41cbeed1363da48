import { toolCall, createMessage } from '@kosong/core';
import { expect } from 'chai';

import { SKIP_THOUGHT_SIGNATURE, thinkingConfigFor, thinkingEffortOf } from '../index.js';
import { GEMINI_CASES, GEMINI_SNAPSHOTS } from './fixtures.js';
import { collect, user, useServer } from './support.js';

/** The keys the spec's snapshot tests keep of a request body. */
function snapshot(body: unknown): Record<string, unknown> {
  const { contents, systemInstruction, tools } = body as Record<string, unknown>;
  return tools === undefined ? { contents, systemInstruction } : { contents, systemInstruction, tools };
}

/** Every `functionCall` and `functionResponse` object of a request body. */
function functionObjects(body: unknown): Record<string, unknown>[] {
  const found: Record<string, unknown>[] = [];
  for (const content of (body as { contents: { parts: Record<string, Record<string, unknown>>[] }[] }).contents) {
    for (const part of content.parts) {
      if (part['functionCall'] !== undefined) found.push(part['functionCall']);
      if (part['functionResponse'] !== undefined) found.push(part['functionResponse']);
    }
  }
  return found;
}

describe('Gemini request snapshots (kosong spec §7.6, tests 158–162), on the wire', () => {
  const ctx = useServer();

  describe('Gemini API (gemini-2.5-flash)', () => {
    for (const [name, request] of Object.entries(GEMINI_CASES)) {
      it(name, async () => {
        await collect(await ctx.provider().generate(request.system, request.tools, request.history));
        expect(snapshot(ctx.server.lastRequest.body)).to.deep.equal(GEMINI_SNAPSHOTS[name]);
        expect(ctx.server.lastRequest.path).to.equal('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
      });
    }
  });

  describe('Vertex AI (gemini-3-pro-preview, express mode)', () => {
    // The same camelCase body as the Gemini API (the Python SDK's snake-case function parts are its
    // own artefact). One deliberate difference: a gemini-3 model refuses a turn of unsigned function
    // calls, so the first call of such a turn carries the documented skip signature.
    const signed = (expected: Readonly<Record<string, unknown>>): Readonly<Record<string, unknown>> => {
      const contents = (expected['contents'] as { role: string; parts: Record<string, unknown>[] }[]).map((content) => {
        const first = content.parts.findIndex((part) => part['functionCall'] !== undefined);
        if (first === -1 || content.parts.some((part) => part['thoughtSignature'] !== undefined)) return content;
        return { ...content, parts: content.parts.map((part, index) => (index === first ? { ...part, thoughtSignature: SKIP_THOUGHT_SIGNATURE } : part)) };
      });
      return { ...expected, contents };
    };
    for (const [name, request] of Object.entries(GEMINI_CASES)) {
      it(name, async () => {
        await collect(await ctx.provider({ vertexAI: true, model: 'gemini-3-pro-preview' }).generate(request.system, request.tools, request.history));
        expect(snapshot(ctx.server.lastRequest.body)).to.deep.equal(signed(GEMINI_SNAPSHOTS[name]!));
        expect(ctx.server.lastRequest.path).to.equal('/v1beta1/publishers/google/models/gemini-3-pro-preview:streamGenerateContent?alt=sse');
      });
    }
  });

  it('sends no `id` in any functionCall or functionResponse, also for ids the API made (test 161)', async () => {
    const history = [
      user('Add 2 and 3, multiply 4 and 5'),
      createMessage('assistant', [], { toolCalls: [toolCall('fc-from-api', 'add', '{"a":2,"b":3}'), toolCall('multiply_8a1c0f3e-1d2b-4c5d-8e9f-0a1b2c3d4e5f', 'multiply', '{"a":4,"b":5}')] }),
      createMessage('tool', '5', { toolCallId: 'fc-from-api' }),
      createMessage('tool', '20', { toolCallId: 'multiply_8a1c0f3e-1d2b-4c5d-8e9f-0a1b2c3d4e5f' }),
    ];
    for (const model of ['gemini-2.5-flash', 'gemini-3-pro-preview']) {
      await collect(await ctx.provider({ model }).generate('', [], history));
      const objects = functionObjects(ctx.server.lastRequest.body);
      expect(objects).to.have.length(4);
      for (const object of objects) expect(object, model).to.not.have.property('id');
    }
  });

  it('withThinking("high") on gemini-2.5-flash sends a 32000-token budget with thoughts (test 162)', async () => {
    await collect(await ctx.provider().withThinking('high').generate('', [], [user('hi')]));
    expect((ctx.server.lastRequest.body as { generationConfig: unknown }).generationConfig).to.deep.equal({
      thinkingConfig: { includeThoughts: true, thinkingBudget: 32000 },
    });
  });

  it('withGeneration({ temperature: 0.7, maxOutputTokens: 2048 }) sends them in generationConfig (test 160)', async () => {
    await collect(await ctx.provider().withGeneration({ temperature: 0.7, maxOutputTokens: 2048 }).generate('', [], [user('hi')]));
    expect((ctx.server.lastRequest.body as { generationConfig: unknown }).generationConfig).to.deep.equal({ temperature: 0.7, maxOutputTokens: 2048 });
  });

  it('maps every effort to a thinking config and back (levels for gemini-3, budgets before)', async () => {
    const table = [
      ['gemini-2.5-flash', 'off', { includeThoughts: false, thinkingBudget: 0 }, 'off'],
      ['gemini-2.5-flash', 'low', { includeThoughts: true, thinkingBudget: 1024 }, 'low'],
      ['gemini-2.5-pro', 'medium', { includeThoughts: true, thinkingBudget: 4096 }, 'medium'],
      ['gemini-2.5-pro', 'xhigh', { includeThoughts: true, thinkingBudget: 32000 }, 'high'],
      ['gemini-2.5-pro', 'max', { includeThoughts: true, thinkingBudget: 32000 }, 'high'],
      ['gemini-3-pro-preview', 'off', { includeThoughts: true }, undefined],
      ['gemini-3-pro-preview', 'low', { includeThoughts: true, thinkingLevel: 'LOW' }, 'low'],
      ['gemini-3-flash-preview', 'medium', { includeThoughts: true, thinkingLevel: 'HIGH' }, 'high'],
      ['gemini-3-pro-preview', 'max', { includeThoughts: true, thinkingLevel: 'HIGH' }, 'high'],
    ] as const;
    for (const [model, effort, config, readBack] of table) {
      expect(thinkingConfigFor(model, effort), `${model} ${effort}`).to.deep.equal(config);
      const provider = ctx.provider({ model }).withThinking(effort);
      expect(provider.thinkingEffort, `${model} ${effort}`).to.equal(readBack);
      await collect(await provider.generate('', [], [user('hi')]));
      expect((ctx.server.lastRequest.body as { generationConfig: unknown }).generationConfig, `${model} ${effort}`).to.deep.equal({ thinkingConfig: config });
    }
    expect(thinkingEffortOf({ thinkingLevel: 'MINIMAL' })).to.equal('low');
    expect(thinkingEffortOf({ thinkingLevel: 'MEDIUM' })).to.equal('medium');
    expect(thinkingEffortOf({ thinkingBudget: 2000 })).to.equal('medium');
    expect(thinkingEffortOf(undefined)).to.equal(undefined);
  });
});
