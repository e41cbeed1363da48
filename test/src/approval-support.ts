/**
 * What the approval specs share: a model that asks for two calls, then answers, and a toolset in
 * which one of them needs approval.
 */
import { appendFileSync } from 'node:fs';
import { requireApproval, textPart, toolCall, toolOk, type ChatProvider, type Message, type ToolCall, type Toolset } from '@kosong/core';
import { MockChatProvider } from '@kosong/provider-echo';

/**
 * A model driven by the history: after the user's message it calls `deploy` (`d1`) and `status`
 * (`s1`) at once; after tool results it says what the last results were.
 */
export function planModel(): ChatProvider & { readonly calls: number } {
  let calls = 0;
  const pick = (history: readonly Message[]): MockChatProvider => {
    const last = history.at(-1);
    if (last?.role === 'tool') {
      const results = history.filter((m) => m.role === 'tool').map((m) => m.content.map((p) => (p.type === 'text' ? p.text : '')).join(''));
      return new MockChatProvider([textPart(`Done: ${results.join(' | ')}`)], { usage: { inputOther: 5, output: 3, inputCacheRead: 0, inputCacheCreation: 0 } });
    }
    return new MockChatProvider([textPart('Deploying.'), toolCall('d1', 'deploy', '{"env":"prod"}'), toolCall('s1', 'status', '{}')], {
      usage: { inputOther: 10, output: 7, inputCacheRead: 0, inputCacheCreation: 0 },
      finishReason: 'tool_calls',
      id: 'msg-1',
    });
  };
  const provider = {
    name: 'plan',
    modelName: 'plan',
    thinkingEffort: undefined,
    generation: {},
    get calls() {
      return calls;
    },
    generate(...args: Parameters<ChatProvider['generate']>) {
      calls++;
      return pick(args[2]).generate(...args);
    },
    withThinking: () => provider,
    withGeneration: () => provider,
  };
  return provider;
}

/** Tools `deploy` (needs approval) and `status`; each run is recorded in `ran` (and in `logFile`, if given, across processes). */
export function deployTools(logFile?: string): Toolset & { readonly ran: string[] } {
  const ran: string[] = [];
  const inner: Toolset = {
    tools: [
      { name: 'deploy', description: 'Deploys.', parameters: { type: 'object' } },
      { name: 'status', description: 'Status.', parameters: { type: 'object' } },
    ],
    handle: (call: ToolCall) => {
      ran.push(call.id);
      if (logFile) appendFileSync(logFile, `${process.pid} ${call.id}\n`);
      return { toolCallId: call.id, returnValue: toolOk({ output: `${call.function.name} ok` }) };
    },
  };
  return Object.assign(requireApproval(inner, ['deploy']), { ran });
}
