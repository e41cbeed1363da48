import {
  Agent,
  ChatProviderError,
  step,
  textPart,
  toolCall,
  toolOk,
  type ChatProvider,
  type Message,
  type StreamedMessage,
  type Toolset,
} from '@kosong/core';
import { ChaosChatProvider, MockChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';

const TOOL_ROUNDS = 4;

/**
 * A model that works through a task: it calls `count` until it has seen TOOL_ROUNDS tool results,
 * then answers. It reads only the history, so a retried request gets the same answer.
 */
const taskModel: ChatProvider = {
  name: 'task',
  modelName: 'task',
  thinkingEffort: undefined,
  generate(systemPrompt, tools, history, options): Promise<StreamedMessage> {
    const seen = history.filter((m) => m.role === 'tool').length;
    const parts =
      seen < TOOL_ROUNDS
        ? [textPart(`Counting ${seen + 1}.`), toolCall(`call-${seen + 1}`, 'count', `{"n":${seen + 1}}`)]
        : [textPart(`Counted to ${seen}.`)];
    return new MockChatProvider(parts, { usage: { inputOther: 10, output: 5, inputCacheRead: 0, inputCacheCreation: 0 } }).generate(
      systemPrompt,
      tools,
      history,
      options,
    );
  },
  withThinking: () => taskModel,
  generation: {},
  withGeneration: () => taskModel,
};

const countTool: Toolset = {
  tools: [{ name: 'count', description: 'Counts.', parameters: { type: 'object' } }],
  handle: (call) => ({ toolCallId: call.id, returnValue: toolOk({ output: `counted ${call.function.arguments ?? ''}` }) }),
};

/** The context holds only whole steps: each assistant message with calls is followed by exactly its results. */
function expectNoPartialStep(history: readonly Message[]): void {
  for (let i = 0; i < history.length; i++) {
    const message = history[i]!;
    if (message.role !== 'assistant' || !message.toolCalls?.length) continue;
    const results = history.slice(i + 1, i + 1 + message.toolCalls.length);
    expect(results.map((m) => [m.role, m.toolCallId])).to.deep.equal(message.toolCalls.map((c) => ['tool', c.id]));
  }
}

function chaosAgent(seed: number, errorProbability: number, maxAttempts: number): { agent: Agent; chaos: ChaosChatProvider; faults: string[] } {
  const faults: string[] = [];
  const chaos = new ChaosChatProvider(taskModel, {
    errorProbability,
    seed,
    retryAfterSeconds: 0.001,
    corruptToolCallProbability: 0.1,
    onFault: (e) => void faults.push(e.fault),
  });
  const agent = new Agent({
    systemPrompt: 'Count.',
    step: (options) => step({ ...options, provider: chaos, toolset: countTool }),
    retry: { maxAttempts, initialDelayMs: 1, maxDelayMs: 4, jitterMs: 1 },
  });
  return { agent, chaos, faults };
}

describe('Agent against ChaosChatProvider', function () {
  this.timeout(20_000);

  it('at a 30 % fault rate completes within the retry budget, every step whole, over 25 seeds', async () => {
    let totalFaults = 0;
    for (let seed = 1; seed <= 25; seed++) {
      const { agent, faults } = chaosAgent(seed, 0.3, 6);
      const result = await agent.run('count please');
      expect(result.stopReason, `seed ${seed}`).to.equal('no_tool_calls');
      expect(result.message.content).to.deep.equal([textPart(`Counted to ${TOOL_ROUNDS}.`)]);
      const history = agent.context.history;
      // user, then TOOL_ROUNDS × (assistant + tool), then the answer: failed attempts left nothing behind.
      expect(history.map((m) => m.role)).to.deep.equal(['user', ...Array(TOOL_ROUNDS).fill(['assistant', 'tool']).flat(), 'assistant']);
      expectNoPartialStep(history);
      totalFaults += faults.filter((f) => f !== 'corrupt_tool_call').length;
    }
    // The run really was chaotic: about 30 % of some 150 calls failed.
    expect(totalFaults).to.be.within(20, 90);
  });

  it('with faults beyond the budget fails with the last error, the context intact', async () => {
    const { agent, faults } = chaosAgent(7, 1, 3);
    const errors: unknown[] = [];
    const caught = await agent.run('count please', { onEvent: (e) => void (e.type === 'retry' && errors.push(e.error)) }).catch((e: unknown) => e);
    expect(ChatProviderError.isInstance(caught)).to.equal(true);
    expect(errors).to.have.length(2); // attempts 1 and 2 were retried; attempt 3's error is the one thrown
    expect(faults).to.have.length(3);
    expect(errors).to.not.include(caught);
    expect(agent.context.history.map((m) => m.role)).to.deep.equal(['user']);
  });
});
