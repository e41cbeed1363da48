import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { definePlugin, Kernel, LinearContext, step, textPart, thinkPart, toolOk, type Tool, type ToolCall, type Toolset } from '@kosong/core';
import { expect } from 'chai';

import { OpenAIResponsesChatProvider, openaiResponsesPlugin } from '../index.js';
import { responsesReply } from '../testing/index.js';
import { ADD_TOOL, MUL_TOOL } from './fixtures.js';
import { lastBody, useResponsesServer } from './responses-support.js';
import { delay, TEST_KEY, user } from './support.js';

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

const reasoningItem = (text: string, encrypted: string): object => ({ summary: [{ type: 'summary_text', text }], type: 'reasoning', encrypted_content: encrypted });
const callItem = (callId: string, name: string, args: string): object => ({ arguments: args, call_id: callId, name, type: 'function_call' });
const outputItem = (callId: string, output: string): object => ({ call_id: callId, output: [{ type: 'input_text', text: output }], type: 'function_call_output' });

describe('OpenAI Responses end to end over HTTP: a multi-step turn with encrypted reasoning and parallel tools', () => {
  const ctx = useResponsesServer();
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kosong-responses-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('encrypted reasoning and call ids round-trip through every step, and through the JSONL context', async () => {
    const kernel = new Kernel();
    const toolset = calculator();
    const provider = new OpenAIResponsesChatProvider({ baseURL: ctx.server.baseURL, apiKey: TEST_KEY, model: 'gpt-5.1' }).withThinking('high');
    try {
      await kernel.use(
        definePlugin({ name: 'responses', setup: (context) => context.bindChatProvider('openai-responses', provider, { default: true }) }),
        definePlugin({ name: 'tools', setup: (context) => context.bindToolset(toolset) }),
      );
      ctx.server.reply(
        responsesReply(
          [
            { type: 'reasoning', summary: [['Three ', 'sums.'], ['At once.']], encrypted: 'gAAAA-enc-1' },
            { type: 'message', text: ['Computing.'] },
            { type: 'function_call', callId: 'call_add', name: 'add', arguments: ['{"a":2,', '"b":3}'] },
            { type: 'function_call', callId: 'call_mul', name: 'multiply', arguments: ['{"a":4,"b":5}'] },
            { type: 'function_call', callId: 'call_add2', name: 'add', arguments: ['{"a":10,"b":20}'] },
          ],
          { id: 'resp_1', usage: { input_tokens: 80, output_tokens: 60, input_tokens_details: { cached_tokens: 30 } } },
        ),
        responsesReply(
          [
            { type: 'reasoning', summary: [], encrypted: 'gAAAA-enc-2' },
            { type: 'function_call', callId: 'call_mul2', name: 'multiply', arguments: ['{"a":5,"b":30}'] },
          ],
          { id: 'resp_2', usage: { input_tokens: 120, output_tokens: 20, input_tokens_details: { cached_tokens: 80 } } },
        ),
        responsesReply([{ type: 'message', text: ['5, 20 and 30; ', '5 × 30 = 150.'] }], { id: 'resp_3' }),
      );
      const context = new LinearContext(join(dir, 'turn.jsonl'));
      const agent = kernel.agent({ systemPrompt: 'You calculate.', context });
      const turn = await agent.run('Add 2 and 3, multiply 4 and 5, add 10 and 20; then multiply the sums.');

      expect(turn.steps).to.equal(3);
      expect(turn.message.content).to.deep.equal([textPart('5, 20 and 30; 5 × 30 = 150.')]);
      expect(turn.usage).to.deep.include({ inputCacheRead: 110, inputOther: 50 + 40 + 10 });

      // The tools ran in parallel and finished out of order (add is slower) …
      expect(toolset.calls.map((call) => call.id)).to.deep.equal(['call_add', 'call_mul', 'call_add2', 'call_mul2']);
      expect(toolset.completed.slice(0, 3)).to.deep.equal(['call_mul', 'call_add', 'call_add2']);

      const [first, second, third] = ctx.server.requests.map((request) => request.body as { input: object[]; reasoning: unknown; include: unknown; store: unknown });
      for (const body of [first, second, third]) {
        expect(body!).to.deep.include({ reasoning: { effort: 'high', summary: 'auto' }, include: ['reasoning.encrypted_content'], store: false });
      }
      // … but the second request has the reasoning with its encrypted content, the calls as the model
      // made them, and the results in call order, matched by call id.
      const system = { role: 'developer', content: 'You calculate.' };
      const question = { content: [{ type: 'input_text', text: 'Add 2 and 3, multiply 4 and 5, add 10 and 20; then multiply the sums.' }], role: 'user', type: 'message' };
      const firstStep = [
        {
          summary: [{ type: 'summary_text', text: 'Three sums.\n\nAt once.' }],
          type: 'reasoning',
          encrypted_content: 'gAAAA-enc-1',
        },
        { content: [{ type: 'output_text', text: 'Computing.', annotations: [] }], role: 'assistant', type: 'message' },
        callItem('call_add', 'add', '{"a":2,"b":3}'),
        callItem('call_mul', 'multiply', '{"a":4,"b":5}'),
        callItem('call_add2', 'add', '{"a":10,"b":20}'),
        outputItem('call_add', '5'),
        outputItem('call_mul', '20'),
        outputItem('call_add2', '30'),
      ];
      expect(first!.input).to.deep.equal([system, question]);
      expect(second!.input).to.deep.equal([system, question, ...firstStep]);
      expect(third!.input).to.deep.equal([system, question, ...firstStep, reasoningItem('', 'gAAAA-enc-2'), callItem('call_mul2', 'multiply', '{"a":5,"b":30}'), outputItem('call_mul2', '150')]);

      // The context keeps the reasoning with its encrypted content, and so does its file: a restored
      // conversation sends the same input.
      expect(agent.context.history[1]!.content).to.deep.equal([thinkPart('Three sums.\n\nAt once.', 'gAAAA-enc-1'), textPart('Computing.')]);
      await context.close(); // the turn is written: its file handle is released, not left to the GC
      const restored = new LinearContext(join(dir, 'turn.jsonl'));
      await restored.restore();
      ctx.server.reply(responsesReply([{ type: 'message', text: ['Yes.'] }]));
      await step({ provider, systemPrompt: 'You calculate.', toolset, history: [...restored.history, user('Sure?')] });
      expect((lastBody(ctx.server)['input'] as object[]).slice(0, -1)).to.deep.equal([
        ...third!.input,
        { content: [{ type: 'output_text', text: '5, 20 and 30; 5 × 30 = 150.', annotations: [] }], role: 'assistant', type: 'message' },
      ]);
    } finally {
      await kernel.dispose();
    }
  });

  it('a response.failed mid-step is retried by the agent loop; the retry starts clean', async () => {
    const kernel = new Kernel();
    try {
      await kernel.use(openaiResponsesPlugin({ env: { OPENAI_API_KEY: TEST_KEY, OPENAI_BASE_URL: ctx.server.baseURL } }));
      ctx.server.reply(
        {
          type: 'stream',
          chunks: [
            ...responsesReply([{ type: 'message', text: ['Half an ans'] }]).chunks.slice(0, 5),
            { type: 'response.failed', response: { id: 'resp_f', status: 'failed', error: { code: 'server_error', message: 'try again' } } },
          ],
        },
        responsesReply([{ type: 'message', text: ['Whole answer.'] }]),
      );
      const agent = kernel.agent({ systemPrompt: '', retry: { maxAttempts: 2, initialDelayMs: 1, jitterMs: 0 } });
      const turn = await agent.run('hi');
      expect(turn.message.content).to.deep.equal([textPart('Whole answer.')]);
      expect(ctx.server.requests).to.have.length(2);
      expect(agent.context.history.map((message) => message.role)).to.deep.equal(['user', 'assistant']);
    } finally {
      await kernel.dispose();
    }
  });
});
