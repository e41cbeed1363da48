import { Agent, LinearContext, step, textPart, toolCall, type AgentContext, type ContextRestoreReport, type Message, type PendingStep } from '@kosong/core';
import { MockChatProvider } from '@kosong/provider-echo';
import { expect } from 'chai';
import { FakeToolset } from './support.js';

/** An AgentContext of its own: records every append call, and can be told to refuse one. */
class RecordingContext implements AgentContext {
  readonly appends: Message[][] = [];
  readonly stored: Message[] = [];
  failOnAppend: number | undefined;
  tokenCount = 0;
  pendingStep: PendingStep | undefined;

  get history(): readonly Message[] {
    return this.stored;
  }

  async append(...messages: Message[]): Promise<void> {
    await Promise.resolve();
    if (this.failOnAppend === this.appends.length) throw new Error('store unavailable');
    this.appends.push(messages);
    this.stored.push(...messages);
  }

  async markTokenCount(count: number): Promise<void> {
    this.tokenCount = count;
    return Promise.resolve();
  }

  deferStep(pending: PendingStep): Promise<void> {
    this.pendingStep = pending;
    return Promise.resolve();
  }

  async completeStep(_stepId: string, ...messages: Message[]): Promise<void> {
    this.pendingStep = undefined;
    await this.append(...messages);
  }

  restore(): Promise<ContextRestoreReport> {
    return Promise.resolve({ messages: this.stored.length });
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

function twoStepAgent(context: AgentContext): Agent {
  let calls = 0;
  const turns = [[textPart('Looking.'), toolCall('a', 'fake', '{"n":1}'), toolCall('b', 'fake', '{"n":2}')], [textPart('Done.')]];
  const toolset = new FakeToolset((c) => ({ kind: 'async', ms: c.id === 'a' ? 15 : 1 }));
  return new Agent({
    systemPrompt: 'test',
    context,
    step: (options) => step({ ...options, provider: new MockChatProvider(turns[calls++]!), toolset }),
  });
}

describe('Agent with any AgentContext', () => {
  it('appends the input, then each whole step in one call: assistant message then tool messages in call order', async () => {
    const context = new RecordingContext();
    const agent = twoStepAgent(context);
    expect(agent.context).to.equal(context);
    await agent.run('go');
    expect(context.appends.map((batch) => batch.map((m) => `${m.role}${m.toolCallId ? ':' + m.toolCallId : ''}`))).to.deep.equal([
      ['user'],
      ['assistant', 'tool:a', 'tool:b'],
      ['assistant'],
    ]);
  });

  it('a refused step append fails the turn and leaves the earlier whole steps only', async () => {
    const context = new RecordingContext();
    context.failOnAppend = 1; // the first step's append
    const agent = twoStepAgent(context);
    const error = await agent.run('go').catch((e: unknown) => e);
    expect(error).to.have.property('message', 'store unavailable');
    expect(context.history.map((m) => m.role)).to.deep.equal(['user']);
  });

  it('LinearContext is an AgentContext', () => {
    const context: AgentContext = new LinearContext();
    expect(context.history).to.deep.equal([]);
    expect(context.tokenCount).to.equal(0);
  });
});
