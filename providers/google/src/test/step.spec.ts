import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { definePlugin, Kernel, LinearContext, step, textPart, thinkPart, toolOk, type Tool, type ToolCall, type Toolset } from '@kosong/core';
import { expect } from 'chai';

import { GeminiChatProvider } from '../index.js';
import { textReply, wireChunk, wireFunctionCall, wireText, wireThought } from '../testing/index.js';
import { ADD_TOOL, MUL_TOOL } from './fixtures.js';
import { delay, TEST_KEY, user, useServer } from './support.js';

/** `add` and `multiply`; `add` is the slower one, so results complete out of call order. Records the calls it ran. */
function calculator(): Toolset & { readonly calls: ToolCall[]; readonly completed: string[] } {
  const calls: ToolCall[] = [];
  const completed: string[] = [];
  const tools: Tool[] = [ADD_TOOL, MUL_TOOL];
  return {
    calls,
    completed,
    tools,
    handle: async (call) => {
      calls.push(call);
      const { a, b } = JSON.parse(call.function.arguments ?? '{}') as { a: number; b: number };
      if (call.function.name === 'add') await delay(40);
      completed.push(call.id);
      return { toolCallId: call.id, returnValue: toolOk({ output: String(call.function.name === 'add' ? a + b : a * b) }) };
    },
  };
}

type Body = { contents: { role: string; parts: Record<string, unknown>[] }[]; generationConfig: unknown; tools: unknown };

describe('Gemini end to end over HTTP: a multi-step turn with thinking and parallel tools', () => {
  const ctx = useServer();
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kosong-gemini-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('signatures and call order round-trip through every step, and through the JSONL context', async () => {
    const kernel = new Kernel();
    const toolset = calculator();
    const provider = new GeminiChatProvider({ baseURL: ctx.server.url, apiKey: TEST_KEY, model: 'gemini-3-pro-preview' }).withThinking('high');
    try {
      await kernel.use(
        definePlugin({ name: 'gemini', setup: (context) => context.bindChatProvider('gemini', provider, { default: true }) }),
        definePlugin({ name: 'tools', setup: (context) => context.bindToolset(toolset) }),
      );
      ctx.server.reply(
        {
          type: 'stream',
          events: [
            wireChunk({ parts: [wireThought('Three sums at once.')] }),
            wireChunk({ parts: [wireText('Computing.')] }),
            wireChunk({
              parts: [
                wireFunctionCall('add', { a: 2, b: 3 }, { thoughtSignature: 'U0lHLUE=' }),
                wireFunctionCall('multiply', { a: 4, b: 5 }, { id: 'api-mul-1' }),
                wireFunctionCall('add', { a: 10, b: 20 }),
              ],
            }),
            wireChunk({ finishReason: 'STOP', usage: { promptTokenCount: 50, candidatesTokenCount: 20, thoughtsTokenCount: 40, cachedContentTokenCount: 30 } }),
          ],
        },
        {
          type: 'stream',
          events: [
            wireChunk({ parts: [wireThought('Now the product of the sums.')] }),
            wireChunk({ parts: [wireFunctionCall('multiply', { a: 5, b: 30 }, { thoughtSignature: 'U0lHLUI=' })], finishReason: 'STOP' }),
          ],
        },
        textReply(['5, 20 and 30; ', '5 × 30 = 150.']),
      );
      const context = new LinearContext(join(dir, 'turn.jsonl'));
      const agent = kernel.agent({ systemPrompt: 'You calculate.', context });
      const turn = await agent.run('Add 2 and 3, multiply 4 and 5, add 10 and 20; then multiply the sums.');

      expect(turn.steps).to.equal(3);
      expect(turn.message.content).to.deep.equal([textPart('5, 20 and 30; 5 × 30 = 150.')]);
      expect(turn.usage).to.deep.include({ inputCacheRead: 30, inputOther: 20 + 10, output: 60 + 2 });

      // The tools ran in parallel and finished out of order (add is slower) …
      const [addId, mulId, add2Id] = toolset.calls.slice(0, 3).map((call) => call.id);
      expect(toolset.completed.slice(0, 3)).to.deep.equal([mulId, addId, add2Id]);
      expect(mulId).to.equal('api-mul-1');

      const [first, second, third] = ctx.server.requests.map((request) => request.body as Body);
      for (const body of [first, second, third]) {
        expect(body!.generationConfig).to.deep.equal({ thinkingConfig: { includeThoughts: true, thinkingLevel: 'HIGH' } });
        expect(body!.tools).to.deep.equal([{ functionDeclarations: [ADD_TOOL, MUL_TOOL].map((t) => ({ name: t.name, description: t.description, parametersJsonSchema: t.parameters })) }]);
      }
      // … but the second request has the calls as the model made them, the signature on the first,
      // no thought text, and the results packed in call order.
      expect(second!.contents.slice(1)).to.deep.equal([
        {
          role: 'model',
          parts: [
            { text: 'Computing.' },
            { functionCall: { name: 'add', args: { a: 2, b: 3 } }, thoughtSignature: 'U0lHLUE=' },
            { functionCall: { name: 'multiply', args: { a: 4, b: 5 } } },
            { functionCall: { name: 'add', args: { a: 10, b: 20 } } },
          ],
        },
        {
          role: 'user',
          parts: [
            { functionResponse: { name: 'add', response: { output: '5' } } },
            { functionResponse: { name: 'multiply', response: { output: '20' } } },
            { functionResponse: { name: 'add', response: { output: '30' } } },
          ],
        },
      ]);
      expect(third!.contents.slice(1, 3)).to.deep.equal(second!.contents.slice(1));
      expect(third!.contents.slice(3)).to.deep.equal([
        { role: 'model', parts: [{ functionCall: { name: 'multiply', args: { a: 5, b: 30 } }, thoughtSignature: 'U0lHLUI=' }] },
        { role: 'user', parts: [{ functionResponse: { name: 'multiply', response: { output: '150' } } }] },
      ]);

      // The context keeps the thinking and the signatures, and so does its file: a restored
      // conversation sends the same contents.
      expect(agent.context.history[1]!.content).to.deep.equal([thinkPart('Three sums at once.'), textPart('Computing.')]);
      expect(agent.context.history[1]!.toolCalls![0]!.extras).to.deep.equal({ thought_signature_b64: 'U0lHLUE=' });
      await context.close(); // the turn is written: its file handle is released, not left to the GC
      const restored = new LinearContext(join(dir, 'turn.jsonl'));
      await restored.restore();
      ctx.server.reply(textReply(['Yes.']));
      await step({ provider, systemPrompt: 'You calculate.', toolset, history: [...restored.history, user('Sure?')] });
      expect((ctx.server.lastRequest.body as Body).contents.slice(0, -1)).to.deep.equal([...third!.contents, { role: 'model', parts: [{ text: '5, 20 and 30; 5 × 30 = 150.' }] }]);
    } finally {
      await kernel.dispose();
    }
  });
});
