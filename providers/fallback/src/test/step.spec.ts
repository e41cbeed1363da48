import { APIStatusError, Kernel, definePlugin, step, textPart, type AgentRetry, type ProviderSwitchEvent, type StepStartEvent } from '@kosong/core';
import { completionChunk, toolCallChunk } from '@kosong/provider-openai/testing';
import { expect } from 'chai';

import { AllModelsFailedError, fallbackProvider, type FallbackSwitchEvent } from '../index.js';
import { openai, recordingToolset, statusReply, useServers, user } from './support.js';

describe('fallbackProvider through step() (real HTTP)', () => {
  const servers = useServers();

  const toolCallsReply = {
    type: 'stream' as const,
    chunks: [
      completionChunk({ id: 'chatcmpl-s', delta: { role: 'assistant', content: 'Adding.' } }),
      toolCallChunk({ index: 0, id: 'call_1', type: 'function', function: { name: 'add', arguments: '' } }, 'chatcmpl-s'),
      toolCallChunk({ index: 0, function: { arguments: '{"a":1,"b":2}' } }, 'chatcmpl-s'),
      toolCallChunk({ index: 1, id: 'call_2', type: 'function', function: { name: 'add', arguments: '{"a":3,' } }, 'chatcmpl-s'),
      toolCallChunk({ index: 1, function: { arguments: '"b":4}' } }, 'chatcmpl-s'),
      completionChunk({ id: 'chatcmpl-s', delta: {}, finishReason: 'tool_calls' }),
    ],
  };

  it('a step with a failing primary runs its tools from the secondary\u2019s stream, results in call order', async () => {
    servers.primary.reply(statusReply(503, 'overloaded'));
    servers.secondary.reply(toolCallsReply);
    const switches: FallbackSwitchEvent[] = [];
    const provider = fallbackProvider([openai(servers.primary.baseURL, 'primary-model'), openai(servers.secondary.baseURL, 'secondary-model')], {
      onSwitch: (event) => void switches.push(event),
    });
    const toolset = recordingToolset();
    const result = await step({ provider, systemPrompt: 'You add.', toolset, history: [user('1+2 and 3+4?')] });
    expect(result.id).to.equal('chatcmpl-s');
    expect(result.finishReason).to.equal('tool_calls');
    expect(result.toolCalls.map((call) => [call.id, call.function.arguments])).to.deep.equal([
      ['call_1', '{"a":1,"b":2}'],
      ['call_2', '{"a":3,"b":4}'],
    ]);
    const results = await result.toolResults();
    expect(results.map((r) => [r.toolCallId, r.returnValue.output])).to.deep.equal([
      ['call_1', 'sum of {"a":1,"b":2}'],
      ['call_2', 'sum of {"a":3,"b":4}'],
    ]);
    expect(toolset.ran.map((call) => call.id)).to.deep.equal(['call_1', 'call_2']);
    expect(switches.map((e) => [e.from.modelName, e.to.modelName])).to.deep.equal([['primary-model', 'secondary-model']]);
    // Both models got the same request (the tools, the system prompt, the history).
    const sent = (server: typeof servers.primary) => {
      const body = server.lastRequest.body as { messages: unknown; tools: unknown };
      return { messages: body.messages, tools: body.tools };
    };
    expect(sent(servers.secondary)).to.deep.equal(sent(servers.primary));
  });

  it('the generation options of the step and of withGeneration, and withThinking, reach the model that answers', async () => {
    servers.primary.reply(statusReply(500));
    const provider = fallbackProvider([openai(servers.primary.baseURL, 'p'), openai(servers.secondary.baseURL, 's')])
      .withGeneration({ maxOutputTokens: 64 })
      .withThinking('high');
    expect(provider.generation).to.deep.equal({ maxOutputTokens: 64 });
    expect(provider.thinkingEffort).to.equal('high');
    await step({ provider, systemPrompt: '', toolset: recordingToolset(), history: [user('hi')], generation: { temperature: 0.5, toolChoice: 'required' } });
    for (const server of [servers.primary, servers.secondary]) {
      expect(server.lastRequest.body).to.deep.include({ max_completion_tokens: 64, temperature: 0.5, tool_choice: 'required', reasoning_effort: 'high' });
    }
  });

  it('the step\u2019s events name the model the step starts with: the secondary once the primary\u2019s breaker is open', async () => {
    servers.primary.reply(statusReply(500));
    const provider = fallbackProvider([openai(servers.primary.baseURL, 'p'), openai(servers.secondary.baseURL, 's')], { breaker: { consecutiveFailures: 1 } });
    const starts: StepStartEvent[] = [];
    const hooks = [{ name: 'watch', hooks: { onStepStart: (event: StepStartEvent) => void starts.push(event) } }];
    await step({ provider, systemPrompt: '', toolset: recordingToolset(), history: [user('a')], hooks });
    await step({ provider, systemPrompt: '', toolset: recordingToolset(), history: [user('b')], hooks });
    expect(starts.map((e) => [e.provider, e.model])).to.deep.equal([
      ['openai', 'p'],
      ['openai', 's'],
    ]);
  });

  it('each switch reaches the onProviderSwitch hook of a kernel hook plugin, with both models and the error', async () => {
    servers.primary.reply(statusReply(503, 'overloaded'));
    const provider = fallbackProvider([openai(servers.primary.baseURL, 'p'), openai(servers.secondary.baseURL, 's')]);
    const events: ProviderSwitchEvent[] = [];
    const kernel = new Kernel();
    await kernel.use(
      definePlugin({
        name: 'setup',
        setup: (ctx) => {
          ctx.bindChatProvider('fallback', provider, { default: true });
          ctx.bindToolset(recordingToolset());
          ctx.bindHooks({ onProviderSwitch: (event: ProviderSwitchEvent) => void events.push(event) });
        },
      }),
    );
    try {
      const result = await kernel.runner().step({ systemPrompt: '', history: [user('hi')], stepId: 'switching' });
      expect(result.message.content).to.deep.equal([textPart('Hello from the test server.')]);
    } finally {
      await kernel.dispose();
    }
    expect(events.map((e) => [e.stepId, e.from, e.to, e.reason])).to.deep.equal([['switching', { provider: 'openai', model: 'p' }, { provider: 'openai', model: 's' }, 'error']]);
    expect(APIStatusError.isInstance(events[0]!.error) && events[0]!.error.statusCode).to.equal(503);
  });
});

describe('fallbackProvider in the agent loop (real HTTP)', () => {
  const servers = useServers();

  it('every model failing with a retryable error: the loop retries the chain, after the last model\u2019s retry-after', async () => {
    servers.primary.reply(statusReply(503, 'overloaded'));
    servers.secondary.reply(statusReply(429, 'busy', { 'retry-after': '0' }));
    const provider = fallbackProvider([openai(servers.primary.baseURL, 'p'), openai(servers.secondary.baseURL, 's')]);
    const kernel = new Kernel();
    await kernel.use(definePlugin({ name: 'setup', setup: (ctx) => (ctx.bindChatProvider('fallback', provider), ctx.bindToolset(recordingToolset())) }));
    const retries: AgentRetry[] = [];
    const turn = await kernel.agent({ systemPrompt: '', onRetry: (event) => void retries.push(event) }).run('hi');
    await kernel.dispose();
    expect(turn.message.content).to.deep.equal([textPart('Hello from the test server.')]);
    expect(retries).to.have.length(1);
    expect(AllModelsFailedError.isInstance(retries[0]!.error)).to.equal(true);
    expect(retries[0]!.delayMs).to.equal(0);
    expect(servers.primary.requests).to.have.length(2);
  });

  it('every model failing with an error that is not retryable at the end: the turn fails at once', async () => {
    servers.primary.reply(statusReply(503, 'overloaded'));
    servers.secondary.reply(statusReply(400, 'bad'));
    const provider = fallbackProvider([openai(servers.primary.baseURL, 'p'), openai(servers.secondary.baseURL, 's')], { shouldSwitch: () => true });
    const kernel = new Kernel();
    await kernel.use(definePlugin({ name: 'setup', setup: (ctx) => (ctx.bindChatProvider('fallback', provider), ctx.bindToolset(recordingToolset())) }));
    const error = await kernel.agent({ systemPrompt: '' }).run('hi').then(
      () => undefined,
      (failure: unknown) => failure,
    );
    await kernel.dispose();
    expect(AllModelsFailedError.isInstance(error) && error.retryable).to.equal(false);
    expect(servers.primary.requests).to.have.length(1);
  });
});
