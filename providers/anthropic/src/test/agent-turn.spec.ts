import { Agent, step, toolOk, type AgentEvent, type Tool, type ToolCall, type Toolset } from '@kosong/core';
import { expect } from 'chai';

import { AnthropicChatProvider, REDACTED_THINKING_PREFIX } from '../index.js';
import { blockEvents, errorEvent, messageReply, messageStart } from '../testing/index.js';
import { ADD_TOOL, MUL_TOOL } from './fixtures.js';
import { delay, TEST_KEY, useServer } from './support.js';

const SUM_TOOL: Tool = { ...ADD_TOOL, name: 'sum', description: 'Sum a list of integers.', parameters: { type: 'object', properties: { values: { type: 'array' } } } };

/** A toolset for add / multiply / sum that takes 50 ms per call and records when each call ran. */
function calculator(): Toolset & { readonly runs: { id: string; start: number; end: number }[] } {
  const runs: { id: string; start: number; end: number }[] = [];
  return {
    runs,
    tools: [ADD_TOOL, MUL_TOOL, SUM_TOOL],
    handle: async (call: ToolCall) => {
      const start = performance.now();
      await delay(50);
      const args = JSON.parse(call.function.arguments ?? '{}') as { a?: number; b?: number; values?: number[] };
      const value = call.function.name === 'add' ? args.a! + args.b! : call.function.name === 'multiply' ? args.a! * args.b! : args.values!.reduce((x, y) => x + y, 0);
      runs.push({ id: call.id, start, end: performance.now() });
      return { toolCallId: call.id, returnValue: toolOk({ output: String(value) }) };
    },
  };
}

type Block = Record<string, unknown>;
type WireMessage = { role: string; content: Block[] };

/** Where the request put cache breakpoints: `system`, `tool <i>`, `message <i> block <j>`. */
function breakpoints(body: Record<string, unknown>): string[] {
  const found: string[] = [];
  ((body['system'] as Block[] | undefined) ?? []).forEach((block, i) => block['cache_control'] && found.push(`system ${i}`));
  (body['tools'] as Block[]).forEach((tool, i) => tool['cache_control'] && found.push(`tool ${i}`));
  (body['messages'] as WireMessage[]).forEach((message, i) => message.content.forEach((block, j) => block['cache_control'] && found.push(`message ${i} block ${j}`)));
  return found;
}

describe('a multi-step agent turn with thinking, parallel tools and prompt caching, over HTTP', () => {
  const ctx = useServer();

  it('round-trips signatures, redacted thinking and tool_use ids, with breakpoints where the spec puts them, and retries an overloaded stream', async () => {
    ctx.server.reply(
      // step 1: think, then two tool calls in one response (run in parallel)
      messageReply(
        [
          { type: 'thinking', thinking: ['Two products ', 'first.'], signature: 'sig_step1' },
          { type: 'text', text: ['Computing both.'] },
          { type: 'tool_use', id: 'toolu_add', name: 'add', input: ['{"a": 2', ', "b": 3}'] },
          { type: 'tool_use', id: 'toolu_mul', name: 'multiply', input: ['{"a": 4, ', '"b": 5}'] },
        ],
        { id: 'msg_1', startUsage: { input_tokens: 40, cache_creation_input_tokens: 900, cache_read_input_tokens: 0 }, deltaUsage: { output_tokens: 30 } },
      ),
      // step 2, first attempt: the API is overloaded mid-stream
      { type: 'stream', events: [messageStart(), ...blockEvents(0, { type: 'thinking', thinking: ['hm'], signature: 'sig_lost' }), errorEvent('overloaded_error', 'Overloaded')] },
      // step 2, retry: redacted and signed thinking between tool calls, then one more call
      messageReply(
        [
          { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix' },
          { type: 'thinking', thinking: ['Now sum.'], signature: 'sig_step2' },
          { type: 'tool_use', id: 'toolu_sum', name: 'sum', input: ['{"values": [5, 20]}'] },
        ],
        { id: 'msg_2', startUsage: { input_tokens: 12, cache_read_input_tokens: 900, cache_creation_input_tokens: 60 }, deltaUsage: { output_tokens: 20 } },
      ),
      // step 3: the answer
      messageReply([{ type: 'text', text: ['The total ', 'is 25.'] }], {
        id: 'msg_3',
        startUsage: { input_tokens: 8, cache_read_input_tokens: 960, cache_creation_input_tokens: 30 },
        deltaUsage: { output_tokens: 9 },
      }),
    );
    const provider = new AnthropicChatProvider({ baseURL: ctx.server.url, apiKey: TEST_KEY, model: 'claude-sonnet-4-20250514', defaultMaxTokens: 4096 }).withThinking('medium');
    const toolset = calculator();
    const agent = new Agent({
      systemPrompt: 'You are a calculator.',
      step: (options) => step({ provider, toolset, ...options }),
      retry: { initialDelayMs: 1, jitterMs: 0 },
    });
    const events: AgentEvent[] = [];
    const turn = await agent.run('What is 2+3 plus 4*5?', { onEvent: (event) => void events.push(event) });

    expect(turn.stopReason).to.equal('no_tool_calls');
    expect(turn.steps).to.equal(3);
    expect(turn.message.content).to.deep.equal([{ type: 'text', text: 'The total is 25.' }]);
    expect(turn.usage).to.deep.equal({ inputOther: 60, output: 59, inputCacheRead: 1860, inputCacheCreation: 990 });
    const retries = events.filter((event) => event.type === 'retry');
    expect(retries).to.have.length(1);
    expect(retries[0]).to.deep.include({ step: 2, attempt: 1 });

    // the two calls of step 1 ran at the same time
    const [add, mul] = ['toolu_add', 'toolu_mul'].map((id) => toolset.runs.find((run) => run.id === id)!);
    expect(add!.start).to.be.below(mul!.end);
    expect(mul!.start).to.be.below(add!.end);

    const bodies = ctx.server.requests.map((request) => request.body as Record<string, unknown>);
    expect(bodies).to.have.length(4);
    for (const [i, request] of ctx.server.requests.entries()) {
      expect(request.headers['anthropic-beta'], `request ${i}`).to.equal('interleaved-thinking-2025-05-14');
      expect(bodies[i]!['thinking'], `request ${i}`).to.deep.equal({ type: 'enabled', budget_tokens: 4096 });
    }

    // request 2 (and its retry, request 3, identical): the first step's thinking and calls went back as they came
    const second = bodies[1]!['messages'] as WireMessage[];
    expect(bodies[2]).to.deep.equal(bodies[1]);
    expect(second.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'user']);
    expect(second[1]!.content).to.deep.equal([
      { type: 'thinking', thinking: 'Two products first.', signature: 'sig_step1' },
      { type: 'text', text: 'Computing both.' },
      { type: 'tool_use', id: 'toolu_add', name: 'add', input: { a: 2, b: 3 } },
      { type: 'tool_use', id: 'toolu_mul', name: 'multiply', input: { a: 4, b: 5 } },
    ]);
    expect(second[2]!.content.map((block) => [block['type'], block['tool_use_id'], (block['content'] as Block[])[0]!['text']])).to.deep.equal([
      ['tool_result', 'toolu_add', '5'],
      ['tool_result', 'toolu_mul', '20'],
    ]);
    expect(breakpoints(bodies[1]!)).to.deep.equal(['system 0', 'tool 2', 'message 2 block 1']);

    // request 4: the retried step's redacted and signed thinking went back as they came; nothing of the failed attempt did
    const fourth = bodies[3]!['messages'] as WireMessage[];
    expect(fourth.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'user', 'assistant', 'user']);
    expect(fourth[3]!.content).to.deep.equal([
      { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix' },
      { type: 'thinking', thinking: 'Now sum.', signature: 'sig_step2' },
      { type: 'tool_use', id: 'toolu_sum', name: 'sum', input: { values: [5, 20] } },
    ]);
    expect(fourth[4]!.content).to.have.length(1);
    expect(fourth[4]!.content[0]).to.include({ type: 'tool_result', tool_use_id: 'toolu_sum' });
    expect(JSON.stringify(fourth)).to.not.include('sig_lost');
    expect(breakpoints(bodies[3]!)).to.deep.equal(['system 0', 'tool 2', 'message 4 block 0']);

    // the context keeps the redacted block in a form that survives JSON persistence
    const assistant = agent.context.history[4]!;
    expect(assistant.role).to.equal('assistant');
    expect(assistant.content[0]).to.deep.equal({ type: 'think', think: '', encrypted: `${REDACTED_THINKING_PREFIX}EmwKAhgBEgy3va3pzix` });
  });
});
