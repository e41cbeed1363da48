/** MockChatProvider in the provider conformance suite. */
import { APIConnectionError, APIStatusError, APITimeoutError, textPart, thinkPart, toolCall } from '@kosong/core';
import { MockChatProvider } from '@kosong/provider-echo';
import { conformanceSuite, type Scenario, type Primed } from './conformance.js';

function prime(scenario: Scenario): Primed {
  const history = [{ role: 'user' as const, content: [textPart('go')] }];
  switch (scenario.kind) {
    case 'text':
      return { provider: new MockChatProvider(scenario.chunks.map(textPart)), history };
    case 'think':
      return { provider: new MockChatProvider([...scenario.think.map((t) => thinkPart(t)), ...scenario.text.map(textPart)]), history };
    case 'tool_calls':
      return { provider: new MockChatProvider([textPart(scenario.text), ...scenario.calls.map((c) => toolCall(c.id, c.name, c.args))]), history };
    case 'usage':
      return { provider: new MockChatProvider([textPart(scenario.text)], { usage: scenario.usage }), history };
    case 'slow':
      return { provider: new MockChatProvider(scenario.chunks.map(textPart), { delayMs: scenario.delayMs }), history };
    case 'error': {
      const error =
        scenario.error === 'connection'
          ? new APIConnectionError('connection reset')
          : scenario.error === 'timeout'
            ? new APITimeoutError('timed out')
            : new APIStatusError(scenario.status ?? 500, 'failed', { retryAfterSeconds: scenario.retryAfterSeconds });
      return { provider: new MockChatProvider([], { generateError: error }), history };
    }
  }
}

conformanceSuite({
  name: 'MockChatProvider',
  streamsThinking: true,
  reportsRetryAfter: true,
  prime,
  sentGeneration: (provider) => (provider as MockChatProvider).requests.at(-1)?.generation ?? {},
  sentOutput: (provider) => (provider as MockChatProvider).requests.at(-1)?.output?.schema,
});
