import {
  APIStatusError,
  createMessage,
  step,
  textPart,
  tokenUsage,
  toolCall,
  toolError,
  toolOk,
  type Message,
  type ToolResult,
  type Toolset,
} from '@kosong/core';
import { parseToolArguments } from '@kosong/core/provider-kit';
import { expect } from 'chai';

import { ChaosChatProvider, EchoChatProvider, ScriptedEchoChatProvider } from '../index.js';
import { lines, rejection, user } from './support.js';

/** A toolset with one tool, `add`, that adds two numbers; bad arguments give an error result. */
function adder(): Toolset & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    tools: [
      {
        name: 'add',
        description: 'Adds a and b.',
        parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
      },
    ],
    handle(call): ToolResult {
      calls.push(call.function.arguments ?? '');
      const parsed = parseToolArguments(call.function.arguments);
      if (!parsed.ok) return { toolCallId: call.id, returnValue: toolError({ message: `Invalid arguments: ${parsed.error}`, brief: 'bad arguments' }) };
      const { a, b } = parsed.value as { a: number; b: number };
      return { toolCallId: call.id, returnValue: toolOk({ output: String(a + b) }) };
    },
  };
}

const ADD_SCRIPT = lines(
  'id: step-1',
  'usage: input_other=12 output=7',
  'text: Let me add that.',
  'tool_call: {"id": "call-1", "name": "add", "arguments": "{\\"a\\": 1,"}',
  'tool_call_part: " \\"b\\": 2}"',
  'finish: tool_calls',
);

describe('step() over the offline providers', () => {
  it('EchoChatProvider: a step streams the script, merges the call and runs the tool', async () => {
    const toolset = adder();
    const result = await step({ provider: new EchoChatProvider(), systemPrompt: 'You add.', toolset, history: [user(ADD_SCRIPT)] });
    expect(result.id).to.equal('step-1');
    expect(result.usage).to.deep.equal(tokenUsage({ inputOther: 12, output: 7 }));
    expect(result.finishReason).to.equal('tool_calls');
    expect(result.message.role).to.equal('assistant');
    expect(result.message.content).to.deep.equal([textPart('Let me add that.')]);
    expect(result.toolCalls).to.deep.equal([toolCall('call-1', 'add', '{"a": 1, "b": 2}')]);
    expect(await result.toolResults()).to.deep.equal([{ toolCallId: 'call-1', returnValue: toolOk({ output: '3' }) }]);
    expect(toolset.calls).to.deep.equal(['{"a": 1, "b": 2}']);
  });

  it('EchoChatProvider: an error: line fails the step with that error, and no tool runs', async () => {
    const toolset = adder();
    const error = await rejection(step({ provider: new EchoChatProvider(), systemPrompt: '', toolset, history: [user(`${ADD_SCRIPT}\nerror: 429 slow down`)] }));
    expect(error).to.be.instanceOf(APIStatusError);
    expect((error as APIStatusError).statusCode).to.equal(429);
    expect(toolset.calls).to.deep.equal([]);
  });

  it('ScriptedEchoChatProvider: a two-step agent loop (tool call, then the answer)', async () => {
    const provider = new ScriptedEchoChatProvider([ADD_SCRIPT, 'text: 1 + 2 = 3.\nfinish: stop']);
    const toolset = adder();
    const history: Message[] = [user('What is 1 + 2?')];
    for (let turn = 0; turn < 5; turn++) {
      const result = await step({ provider, systemPrompt: '', toolset, history });
      history.push(result.message);
      const results = await result.toolResults();
      for (const { toolCallId, returnValue } of results) history.push(createMessage('tool', returnValue.output as string, { toolCallId }));
      if (result.toolCalls.length === 0) break;
    }
    expect(history.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'tool', 'assistant']);
    expect(history[2]).to.deep.equal(createMessage('tool', '3', { toolCallId: 'call-1' }));
    expect(history[3]!.content).to.deep.equal([textPart('1 + 2 = 3.')]);
    expect(provider.remaining).to.equal(0);
  });

  it('ChaosChatProvider over Echo: a corrupted call reaches the tool as invalid JSON', async () => {
    const toolset = adder();
    const provider = new ChaosChatProvider(new EchoChatProvider(), { seed: 1, errorProbability: 0, corruptToolCallProbability: 1 });
    const result = await step({ provider, systemPrompt: '', toolset, history: [user(ADD_SCRIPT)] });
    expect(result.toolCalls).to.deep.equal([toolCall('call-1', 'add', '{"a": 1, "b": 2')]);
    const [only] = await result.toolResults();
    expect(only!.returnValue.isError).to.equal(true);
    expect(only!.returnValue.message).to.match(/^Invalid arguments: /);
  });
});
