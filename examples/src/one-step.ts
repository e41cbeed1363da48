/**
 * `npm run example`: one kosong step, offline.
 *
 * A mock model streams a short answer with two tool calls in the middle of its text. Each call is
 * dispatched the moment it is complete, while the model is still "talking"; the results come back in
 * call order although the second tool finishes first. Everything is printed as it happens.
 */
import {
  step,
  textPart,
  thinkPart,
  toolCall,
  toolCallPart,
  toolError,
  toolOk,
  inputTokens,
  tokenUsage,
  type Toolset,
} from '@kosong/core';
import { parseToolArguments } from '@kosong/core/toolset-kit';
import { MockChatProvider } from '@kosong/provider-echo';

const t0 = performance.now();
const at = (): string => `${String(Math.round(performance.now() - t0)).padStart(4)} ms`;
const log = (line: string): void => console.log(`${at()}  ${line}`);

// The model's response, as a provider would stream it: thinking, text deltas, and tool calls whose
// arguments arrive in fragments.
const provider = new MockChatProvider(
  [
    thinkPart('The user wants the weather in two cities. '),
    thinkPart('I can ask for both at once.'),
    textPart('Let me check '),
    textPart('Paris'),
    toolCall('call_1', 'get_weather', null),
    toolCallPart('{"city": '),
    toolCallPart('"Paris"}'),
    textPart(' and Tokyo'),
    toolCall('call_2', 'get_weather', '{"city": "Tokyo"}'),
    textPart(' for you.'),
  ],
  { delayMs: 40, id: 'msg_demo', finishReason: 'tool_calls', usage: tokenUsage({ inputOther: 42, output: 27, inputCacheRead: 8 }) },
);

// A toolset with one tool. Paris is slow (300 ms), Tokyo fast (50 ms).
const weather: Record<string, { readonly tempC: number; readonly ms: number }> = {
  Paris: { tempC: 14, ms: 300 },
  Tokyo: { tempC: 21, ms: 50 },
};
const toolset: Toolset = {
  tools: [
    {
      name: 'get_weather',
      description: 'Current temperature of a city.',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  ],
  async handle(call, { signal }) {
    log(`tool  ${call.id} started: ${call.function.name}(${call.function.arguments})`);
    const args = parseToolArguments(call.function.arguments);
    const city = args.ok && typeof args.value === 'object' && args.value !== null ? (args.value as { city?: unknown }).city : undefined;
    const known = typeof city === 'string' ? weather[city] : undefined;
    if (!known) return { toolCallId: call.id, returnValue: toolError({ message: `Unknown city: ${String(city)}`, brief: 'Unknown city' }) };
    await new Promise((resolve, reject) => {
      const timer = setTimeout(resolve, known.ms);
      signal.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
    });
    return { toolCallId: call.id, returnValue: toolOk({ output: `${known.tempC} °C in ${String(city)}`, brief: `${String(city)}: ${known.tempC} °C` }) };
  },
};

log('step started');
const result = await step({
  provider,
  systemPrompt: 'You are a helpful assistant.',
  toolset,
  history: [{ role: 'user', content: [textPart('What is the weather in Paris and Tokyo?')] }],
  onPart: (part) => {
    if (part.type === 'text') log(`model text  ${JSON.stringify(part.text)}`);
    else if (part.type === 'think') log(`model think ${JSON.stringify(part.think)}`);
    else if (part.type === 'function') log(`model calls ${part.function.name} (${part.id})`);
  },
  onToolResult: (toolResult) => log(`tool  ${toolResult.toolCallId} finished: ${JSON.stringify(toolResult.returnValue.output)}`),
});
log('stream finished: the message is complete, tools may still run');

const results = await result.toolResults();
log('all tool results in (call order):');
results.forEach((r, i) => console.log(`          ${i + 1}. ${r.toolCallId} → ${String(r.returnValue.output)}`));

const text = result.message.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');
console.log(`\nassistant message: ${JSON.stringify(text)} with ${result.toolCalls.length} tool calls`);
if (result.usage) console.log(`usage: ${inputTokens(result.usage)} input tokens (${result.usage.inputCacheRead} cached), ${result.usage.output} output tokens`);
console.log(`finish reason: ${result.finishReason ?? 'unknown'}`);
