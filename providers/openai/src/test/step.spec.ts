import {
  createMessage,
  definePlugin,
  Kernel,
  step,
  textPart,
  thinkPart,
  toolCall,
  toolOk,
  type Tool,
  type ToolCall,
  type Toolset,
} from '@kosong/core';
import { toolResultToMessage } from '@kosong/core/context-kit';
import { expect } from 'chai';

import { kimiPlugin, OpenAIChatProvider } from '../index.js';
import { completionChunk, textReply, toolCallChunk, usageChunk, type StreamReply } from '../testing/index.js';
import { ADD_TOOL } from './fixtures.js';
import { TEST_KEY, user, useServer } from './support.js';

/** A toolset with one `add` tool; records the calls it ran. */
function adder(): Toolset & { readonly calls: ToolCall[] } {
  const calls: ToolCall[] = [];
  const tools: Tool[] = [ADD_TOOL];
  return {
    calls,
    tools,
    handle: (call) => {
      calls.push(call);
      const { a, b } = JSON.parse(call.function.arguments ?? '{}') as { a: number; b: number };
      return { toolCallId: call.id, returnValue: toolOk({ output: String(a + b) }) };
    },
  };
}

/** A streamed tool call of `add` with its arguments in fragments. */
function addCallReply(id: string, extra: readonly object[] = []): StreamReply {
  return {
    type: 'stream',
    chunks: [
      ...extra,
      completionChunk({ delta: { content: "I'll add them." } }),
      toolCallChunk({ index: 0, id, type: 'function', function: { name: 'add', arguments: '' } }),
      toolCallChunk({ index: 0, function: { arguments: '{"a": 2, ' } }),
      toolCallChunk({ index: 0, function: { arguments: '"b": 3}' } }),
      completionChunk({ delta: {}, finishReason: 'tool_calls' }),
      usageChunk({ prompt_tokens: 30, completion_tokens: 12, prompt_tokens_details: { cached_tokens: 10 } }),
    ],
  };
}

describe('end to end over HTTP', () => {
  const ctx = useServer();

  it('step() with a tool: the call is dispatched, its result goes back in the next request', async () => {
    const provider = new OpenAIChatProvider({ baseURL: ctx.server.baseURL, apiKey: TEST_KEY, model: 'gpt-test' });
    const toolset = adder();
    ctx.server.reply({ ...addCallReply('call_1'), headers: { 'x-trace-id': 'trace-step-1' } });
    const history = [user('Add 2 and 3')];
    const result = await step({ provider, systemPrompt: 'You add.', toolset, history });
    expect(result.message).to.deep.equal(createMessage('assistant', "I'll add them.", { toolCalls: [toolCall('call_1', 'add', '{"a": 2, "b": 3}')] }));
    expect(result).to.include({ finishReason: 'tool_calls', traceId: 'trace-step-1', id: 'chatcmpl-test' });
    expect(result.usage).to.deep.equal({ inputOther: 20, output: 12, inputCacheRead: 10, inputCacheCreation: 0 });
    const results = await result.toolResults();
    expect(results.map((r) => r.returnValue.output)).to.deep.equal(['5']);
    expect(toolset.calls).to.have.length(1);
    expect((ctx.server.lastRequest.body as { tools: unknown }).tools).to.deep.equal([
      { type: 'function', function: { name: 'add', description: ADD_TOOL.description, parameters: ADD_TOOL.parameters } },
    ]);

    ctx.server.reply(textReply(['2 + 3 = 5.']));
    const next = await step({ provider, systemPrompt: 'You add.', toolset, history: [...history, result.message, ...results.map(toolResultToMessage)] });
    expect(next.message.content).to.deep.equal([textPart('2 + 3 = 5.')]);
    expect(next.toolCalls).to.deep.equal([]);
    expect((ctx.server.lastRequest.body as { messages: unknown }).messages).to.deep.equal([
      { role: 'system', content: 'You add.' },
      { role: 'user', content: 'Add 2 and 3' },
      { role: 'assistant', content: "I'll add them.", tool_calls: [{ type: 'function', id: 'call_1', function: { name: 'add', arguments: '{"a": 2, "b": 3}' } }] },
      { role: 'tool', content: '5', tool_call_id: 'call_1' },
    ]);
  });

  it('an agent turn on the kernel with kimiPlugin from the environment: thinking, a tool, the answer', async () => {
    const kernel = new Kernel();
    const toolset = adder();
    try {
      await kernel.use(
        kimiPlugin({ env: { KIMI_API_KEY: TEST_KEY, KIMI_BASE_URL: ctx.server.baseURL } }),
        definePlugin({ name: 'tools', setup: (context) => context.bindToolset(toolset) }),
      );
      ctx.server.reply(addCallReply('add:0', [completionChunk({ delta: { reasoning_content: 'Use the tool.' } })]), textReply(['The sum is 5.']));
      const agent = kernel.agent({ systemPrompt: 'You add.' });
      const turn = await agent.run('Add 2 and 3');
      expect(turn.steps).to.equal(2);
      expect(turn.stopReason).to.equal('no_tool_calls');
      expect(turn.message.content).to.deep.equal([textPart('The sum is 5.')]);
      expect(toolset.calls.map((call) => call.id)).to.deep.equal(['add:0']);
      const [first, second] = ctx.server.requests.map((r) => r.body as { messages: unknown[] });
      expect(first!.messages).to.have.length(2);
      expect(second!.messages.slice(2)).to.deep.equal([
        {
          role: 'assistant',
          content: "I'll add them.",
          tool_calls: [{ type: 'function', id: 'add:0', function: { name: 'add', arguments: '{"a": 2, "b": 3}' } }],
          reasoning_content: 'Use the tool.',
        },
        { role: 'tool', content: '5', tool_call_id: 'add:0' },
      ]);
      expect(agent.context.history[1]?.content).to.deep.equal([thinkPart('Use the tool.'), textPart("I'll add them.")]);
    } finally {
      await kernel.dispose();
    }
  });
});
