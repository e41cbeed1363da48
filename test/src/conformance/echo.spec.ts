/** EchoChatProvider in the provider conformance suite: each scenario is an echo DSL script. */
import { textPart } from '@kosong/core';
import { EchoChatProvider } from '@kosong/provider-echo';
import { conformanceSuite, type Scenario, type Primed } from './conformance.js';

/** A DSL line: the payload in quotes, which keep its spaces (the DSL removes one pair and unescapes nothing). */
const line = (kind: string, payload: string): string => {
  if (payload.includes('\n')) throw new Error('an echo DSL line cannot hold a newline');
  return `${kind}: "${payload}"`;
};

function script(scenario: Scenario): string {
  switch (scenario.kind) {
    case 'text':
    case 'slow':
      return scenario.chunks.map((c) => line('text', c)).join('\n');
    case 'think':
      return [...scenario.think.map((t) => line('think', t)), ...scenario.text.map((t) => line('text', t))].join('\n');
    case 'tool_calls':
      return [line('text', scenario.text), ...scenario.calls.map((c) => `tool_call: ${JSON.stringify({ id: c.id, name: c.name, arguments: c.args })}`)].join('\n');
    case 'usage': {
      const u = scenario.usage;
      return `usage: input_other=${u.inputOther} output=${u.output} input_cache_read=${u.inputCacheRead} input_cache_creation=${u.inputCacheCreation}\n${line('text', scenario.text)}`;
    }
    case 'error':
      return `error: ${scenario.error === 'status' ? String(scenario.status ?? 500) : scenario.error}`;
  }
}

function prime(scenario: Scenario): Primed {
  const provider = scenario.kind === 'slow' ? new EchoChatProvider({ delayMs: scenario.delayMs }) : new EchoChatProvider();
  return { provider, history: [{ role: 'user', content: [textPart(script(scenario))] }] };
}

conformanceSuite({
  name: 'EchoChatProvider',
  streamsThinking: true,
  reportsRetryAfter: false,
  prime,
  sentGeneration: (provider) => (provider as EchoChatProvider).requests.at(-1)?.generation ?? {},
  sentOutput: (provider) => (provider as EchoChatProvider).requests.at(-1)?.output?.schema,
});
