/**
 * Variants of the `ai-sdk` suite, all on the same `@ai-sdk/openai` model (`createOpenAI(…).chat`)
 * talking to the suite's server (in its own process):
 *
 * - `do-stream`: the model's `doStream`, its stream of parts read bare (the floor);
 * - `bridge`: `aiSdkProvider(model).generate()` and `for await` over its kosong parts;
 * - `bridge-step`: `step()` through the bridge, a tool for each of the 100 calls, results awaited;
 * - `stream-text`: the AI SDK's own `streamText` with the same model and tool, its `fullStream`
 *   consumed once (text from `text-delta`, results from `tool-result`, as in the `step` suite). It is
 *   ai 6 of the root install (with the `@ai-sdk/openai` 3 model, both of spec v3): ai 7 declares
 *   Node 22 and lives in `bench/peers` only, whose `@ai-sdk/openai` would be another major.
 *
 * The two step variants report the time from the start of the run to the start of the first tool.
 *
 * @module
 */
import { fileURLToPath } from 'node:url';

import { createOpenAI } from '@ai-sdk/openai';
import { extractText, step, toolOk, type Message, type Tool, type Toolset } from '@kosong/core';
import { aiSdkProvider } from '@kosong/provider-ai-sdk';
import { jsonSchema, streamText, tool } from 'ai';
import type { PreparedVariant } from '../../harness.js';
import { startServerProcess } from '../../server-process.js';
import { callId, TOOL_NAME, TOOL_OUTPUT, toolParameters } from '../step/workload.js';
import { checkCounts, countParts, EXPECTED, type Counts } from './workload.js';

const SERVER = fileURLToPath(new URL('./server-process.js', import.meta.url));
const HISTORY: readonly Message[] = [{ role: 'user', content: [{ type: 'text', text: 'go' }] }];
const TOOLS: readonly Tool[] = [{ name: TOOL_NAME, description: 'Does nothing.', parameters: toolParameters() }];

/** The model every variant uses: `@ai-sdk/openai`'s Chat Completions model, against a fresh server. */
async function benchModel(): Promise<ReturnType<ReturnType<typeof createOpenAI>['chat']>> {
  return createOpenAI({ baseURL: await startServerProcess(SERVER), apiKey: 'sk-bench' }).chat('bench');
}

/** The floor: `doStream` and a bare read of its parts, counting text, calls and arguments. */
export async function prepareDoStream(): Promise<PreparedVariant<Counts>> {
  const model = await benchModel();
  const tools = TOOLS.map((t) => ({ type: 'function' as const, name: t.name, description: t.description, inputSchema: t.parameters }));
  return {
    async run() {
      const { stream } = await model.doStream({ prompt: [{ role: 'user', content: [{ type: 'text', text: 'go' }] }], tools });
      let textChars = 0;
      let toolCalls = 0;
      let argumentChars = 0;
      const reader = stream.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (value.type === 'text-delta') textChars += value.delta.length;
        else if (value.type === 'tool-input-start') toolCalls++;
        else if (value.type === 'tool-input-delta') argumentChars += value.delta.length;
      }
      return { textChars, toolCalls, argumentChars };
    },
    verify: (counts) => checkCounts('do-stream', counts),
  };
}

/** The bridge: `generate()` and `for await` over its parts. */
export async function prepareBridge(): Promise<PreparedVariant<Counts>> {
  const provider = aiSdkProvider(await benchModel());
  return {
    async run() {
      const stream = await provider.generate('', TOOLS, HISTORY);
      const counts = await countParts(stream);
      if (stream.finishReason !== 'tool_calls') throw new Error(`bridge: finish reason ${String(stream.finishReason)}`);
      return counts;
    },
    verify: (counts) => checkCounts('bridge', counts),
  };
}

/** What a step variant produced: the text, the results in call order, and when the first tool started. */
interface StepOutput {
  readonly textChars: number;
  readonly results: readonly { readonly toolCallId: string; readonly output: unknown }[];
  readonly firstToolMs: number;
}

function verifyStep(label: string, output: StepOutput): void {
  if (output.textChars !== EXPECTED.textChars) throw new Error(`${label}: ${output.textChars} text characters, expected ${EXPECTED.textChars}`);
  if (output.results.length !== EXPECTED.toolCalls) throw new Error(`${label}: ${output.results.length} tool results, expected ${EXPECTED.toolCalls}`);
  output.results.forEach((result, i) => {
    if (result.toolCallId !== callId(i) || result.output !== TOOL_OUTPUT) throw new Error(`${label}: result ${i} is ${JSON.stringify(result)}`);
  });
  if (!(output.firstToolMs >= 0)) throw new Error(`${label}: no tool started`);
}

/** `step()` through the bridge, then `await result.toolResults()`. */
export async function prepareBridgeStep(): Promise<PreparedVariant<StepOutput>> {
  const provider = aiSdkProvider(await benchModel());
  let started = 0;
  let firstTool = Number.NaN;
  const toolset: Toolset = {
    tools: TOOLS,
    handle(call) {
      if (Number.isNaN(firstTool)) firstTool = performance.now() - started;
      return { toolCallId: call.id, returnValue: toolOk({ output: TOOL_OUTPUT }) };
    },
  };
  return {
    async run() {
      started = performance.now();
      firstTool = Number.NaN;
      const result = await step({ provider, systemPrompt: 'You are a benchmark.', toolset, history: HISTORY });
      const results = await result.toolResults();
      return {
        textChars: extractText(result.message).length,
        results: results.map((r) => ({ toolCallId: r.toolCallId, output: r.returnValue.output })),
        firstToolMs: firstTool,
      };
    },
    verify: (output) => verifyStep('bridge-step', output),
    measure: (output) => ({ firstToolMs: output.firstToolMs }),
  };
}

/** The AI SDK's `streamText` with the same model and tool, its full stream consumed once. */
export async function prepareStreamText(): Promise<PreparedVariant<StepOutput>> {
  const model = await benchModel();
  let started = 0;
  let firstTool = Number.NaN;
  const tools = {
    [TOOL_NAME]: tool({
      description: 'Does nothing.',
      inputSchema: jsonSchema<{ i: number }>(toolParameters()),
      execute: async () => {
        if (Number.isNaN(firstTool)) firstTool = performance.now() - started;
        return TOOL_OUTPUT;
      },
    }),
  };
  return {
    async run() {
      started = performance.now();
      firstTool = Number.NaN;
      const result = streamText({ model, system: 'You are a benchmark.', prompt: 'go', tools });
      let textChars = 0;
      const results: { toolCallId: string; output: unknown }[] = [];
      const errors: unknown[] = [];
      for await (const part of result.fullStream) {
        if (part.type === 'text-delta') textChars += part.text.length;
        else if (part.type === 'tool-result') results.push({ toolCallId: part.toolCallId, output: part.output });
        else if (part.type === 'error' || part.type === 'tool-error') errors.push(part);
      }
      if (errors.length > 0) throw new Error(`stream-text: ${String(errors[0])}`);
      return { textChars, results, firstToolMs: firstTool };
    },
    verify: (output) => verifyStep('stream-text', output),
    measure: (output) => ({ firstToolMs: output.firstToolMs }),
  };
}
