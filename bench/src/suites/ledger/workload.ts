/**
 * The workload of the `ledger` suite: one agent turn of two steps — step 1 streams a few text deltas
 * and two tool calls (`lookup` and `save`, arguments in 3 fragments each), step 2 a text answer —
 * run by an `Agent` on some context whose steps record nothing (`today`: the step function drops the
 * ledger, as steps ran before it existed) or record each call's start and outcome (`ledger`, and
 * `written`: a file context that writes the start records without a sync of their own).
 *
 * @module
 */
import {
  Agent,
  extractText,
  step,
  textPart,
  toolCall,
  toolCallPart,
  toolError,
  toolOk,
  type AgentContext,
  type AgentTurnResult,
  type ChatProvider,
  type Message,
  type StreamedMessagePart,
  type Toolset,
} from '@kosong/core';
import { parseToolArguments } from '@kosong/core/toolset-kit';
import { MockChatProvider } from '@kosong/provider-echo';

/** What the variants compare: steps without the ledger (`today`), with it (`ledger`), with start records written but not synced (`written`, files only). */
export type LedgerMode = 'today' | 'ledger' | 'written';

/** Tool calls per turn (all in step 1). */
export const CALLS_PER_TURN = 2;
/** Messages a turn adds to the history: the user's input, step 1's assistant message and 2 tool messages, step 2's answer. */
export const MESSAGES_PER_TURN = 1 + 1 + CALLS_PER_TURN + 1;
/** Text deltas of each step. */
export const TEXT_DELTAS = 5;

const TOOL_NAMES = ['lookup', 'save'] as const;
const FIRST_DELTAS = ['Let ', 'me ', 'look ', 'that ', 'up. '];
const ANSWER_DELTAS = ['It ', 'is ', 'saved ', 'now', '.'];
/** The text of step 2, the turn's answer. */
export const ANSWER = ANSWER_DELTAS.join('');
const OUTPUTS = ['found: 42', 'saved'] as const;

/** The id of call i. */
export function callId(i: number): string {
  return `call_${i}`;
}

function argumentFragments(i: number): readonly string[] {
  return ['{"key":', `"k${i}"`, '}'];
}

/** Step 1: text deltas, then both calls with their arguments in fragments. */
function firstStepParts(): StreamedMessagePart[] {
  const parts: StreamedMessagePart[] = FIRST_DELTAS.map((text) => textPart(text));
  TOOL_NAMES.forEach((name, i) => {
    parts.push(toolCall(callId(i), name, null));
    for (const fragment of argumentFragments(i)) parts.push(toolCallPart(fragment));
  });
  return parts;
}

/** A scripted model: step 1's response until the history ends with a tool message, then the answer. */
export function scriptedModel(paceMs?: number): ChatProvider {
  const pace = paceMs === undefined ? {} : { delayMs: paceMs };
  const calls = new MockChatProvider(firstStepParts(), { finishReason: 'tool_calls', ...pace });
  const answer = new MockChatProvider(ANSWER_DELTAS.map((text) => textPart(text)), { finishReason: 'stop', ...pace });
  const provider: ChatProvider = {
    name: 'mock',
    modelName: 'mock',
    thinkingEffort: undefined,
    generation: calls.generation,
    generate(systemPrompt, tools, history, options) {
      const last = history[history.length - 1];
      return (last?.role === 'tool' ? answer : calls).generate(systemPrompt, tools, history, options);
    },
    withThinking: () => provider,
    withGeneration: () => provider,
  };
  return provider;
}

/** What the tools saw: how many calls ran, and whether each had an idempotency key. */
export interface ToolTally {
  executed: number;
  withoutKey: number;
}

/** The two tools; they declare no replay policy (the default, `'never'`: a call's start is synced before it runs). */
export function benchToolset(tally: ToolTally): Toolset {
  const toolset: Toolset = {
    tools: TOOL_NAMES.map((name) => ({
      name,
      description: `The ${name} tool.`,
      parameters: { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] },
    })),
    handle(call, context) {
      tally.executed++;
      if (context.idempotencyKey === undefined) tally.withoutKey++;
      const args = parseToolArguments(call.function.arguments);
      const index = TOOL_NAMES.indexOf(call.function.name as (typeof TOOL_NAMES)[number]);
      const returnValue = args.ok && index >= 0 ? toolOk({ output: OUTPUTS[index]! }) : toolError({ message: args.ok ? 'unknown tool' : args.error, brief: 'bad call' });
      return { toolCallId: call.id, returnValue };
    },
  };
  return toolset;
}

/** Makes agents on any context, all with one scripted model and one toolset of `mode`. */
export function agentMaker(mode: LedgerMode, tally: ToolTally, paceMs?: number): (context: AgentContext) => Agent {
  const provider = scriptedModel(paceMs);
  const toolset = benchToolset(tally);
  if (mode !== 'today') return (context) => new Agent({ systemPrompt: 'You are a benchmark.', context, step: (options) => step({ ...options, provider, toolset }) });
  // Steps as they ran before the ledger: the step function does not pass it on, so nothing is recorded.
  return (context) => new Agent({ systemPrompt: 'You are a benchmark.', context, step: ({ ledger: _dropped, ...options }) => step({ ...options, provider, toolset }) });
}

/** An agent on `context` with the scripted model and the toolset of `mode`. */
export function benchAgent(context: AgentContext, mode: LedgerMode, tally: ToolTally, paceMs?: number): Agent {
  return agentMaker(mode, tally, paceMs)(context);
}

/** The turn's input. */
export const INPUT = 'Look k0 up and save k1.';

/** Throws unless `result` is a whole turn of the workload (2 steps, the answer's text). */
export function checkTurn(label: string, result: AgentTurnResult): void {
  if (result.stopReason !== 'no_tool_calls' || result.steps !== 2) {
    throw new Error(`${label}: the turn ended with ${result.stopReason} after ${result.steps} steps, expected no_tool_calls after 2`);
  }
  const text = extractText(result.message);
  if (text !== ANSWER) throw new Error(`${label}: the answer is ${JSON.stringify(text)}, expected ${JSON.stringify(ANSWER)}`);
}

/**
 * Throws unless the last `turns` turns of `history` are whole turns of the workload: the input, the
 * assistant message with both calls, their results in call order, the answer.
 */
export function checkHistory(label: string, history: readonly Message[], turns: number): void {
  if (history.length !== turns * MESSAGES_PER_TURN) throw new Error(`${label}: ${history.length} messages after ${turns} turns, expected ${turns * MESSAGES_PER_TURN}`);
  for (let t = 0; t < turns; t++) {
    const [input, calls, ...rest] = history.slice(t * MESSAGES_PER_TURN, (t + 1) * MESSAGES_PER_TURN);
    const results = rest.slice(0, CALLS_PER_TURN);
    const answer = rest[CALLS_PER_TURN];
    const ids = calls?.toolCalls?.map((c) => c.id) ?? [];
    const ok =
      input?.role === 'user' &&
      calls?.role === 'assistant' &&
      ids.length === CALLS_PER_TURN &&
      ids.every((id, i) => id === callId(i)) &&
      results.every((m, i) => m.role === 'tool' && m.toolCallId === callId(i) && extractText(m) === OUTPUTS[i]) &&
      answer?.role === 'assistant' &&
      extractText(answer) === ANSWER;
    if (!ok) throw new Error(`${label}: turn ${t + 1} of the history is not input, 2 calls, their results in order, answer: ${JSON.stringify(history.slice(t * MESSAGES_PER_TURN, (t + 1) * MESSAGES_PER_TURN))}`);
  }
}
