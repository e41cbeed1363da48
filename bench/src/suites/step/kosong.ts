/**
 * `kosong`: `step()` over the MockChatProvider stream, then `await result.toolResults()`. The tool
 * parses its arguments and resolves at once.
 *
 * @module
 */
import {
  extractText,
  step,
  toolError,
  toolOk,
  type ChatProvider,
  type StepResult,
  type TokenUsage,
  type ToolResult,
  type Toolset,
} from '@kosong/core';
import { parseToolArguments } from '@kosong/core/toolset-kit';
import { MockChatProvider } from '@kosong/provider-echo';
import type { PreparedVariant } from '../../harness.js';
import { callArguments, callId, DELTA, responseParts, STEP_RESPONSE, TOOL_NAME, TOOL_OUTPUT, toolParameters, type ResponseShape } from './workload.js';

interface Output {
  readonly result: StepResult;
  readonly toolResults: readonly ToolResult[];
  readonly executed: number;
}

/** Runs one step of the workload with this provider and toolset (plain `step()`, a kernel runner, …). */
export type StepStarter = (provider: ChatProvider, toolset: Toolset) => () => Promise<StepResult>;

/** `step()` + `await result.toolResults()`. */
export function prepare(): PreparedVariant<Output> {
  return prepareStep('kosong', (provider, toolset) => () => step({ provider, systemPrompt: 'You are a benchmark.', toolset, history: [] }));
}

/**
 * The workload (by default the step suite's response) through any way of running a kosong step, then
 * `await result.toolResults()`, verified the same way (text, calls, results in call order). `label`
 * names the variant in errors; `usage`, if given, is the `TokenUsage` the provider reports for each step.
 */
export function prepareStep(label: string, start: StepStarter, shape: ResponseShape = STEP_RESPONSE, usage?: TokenUsage): PreparedVariant<Output> {
  const provider = new MockChatProvider(responseParts(shape), { finishReason: shape.toolCalls > 0 ? 'tool_calls' : 'stop', ...(usage === undefined ? {} : { usage }) });
  const textLength = shape.textDeltas * DELTA.length;
  const calls = shape.toolCalls;
  let executed = 0;
  const toolset: Toolset = {
    tools: [{ name: TOOL_NAME, description: 'Does nothing.', parameters: toolParameters() }],
    async handle(call) {
      executed++;
      const args = parseToolArguments(call.function.arguments);
      const returnValue = args.ok ? toolOk({ output: TOOL_OUTPUT }) : toolError({ message: args.error, brief: 'bad arguments' });
      return { toolCallId: call.id, returnValue };
    },
  };
  const runStep = start(provider, toolset);
  return {
    async run() {
      executed = 0;
      const result = await runStep();
      const toolResults = await result.toolResults();
      return { result, toolResults, executed };
    },
    verify({ result, toolResults, executed: ran }) {
      const length = extractText(result.message).length;
      if (length !== textLength) throw new Error(`${label}: text length ${length}, expected ${textLength}`);
      if (ran !== calls) throw new Error(`${label}: ${ran} tools executed, expected ${calls}`);
      if (result.toolCalls.length !== calls || toolResults.length !== calls) {
        throw new Error(`${label}: ${result.toolCalls.length} calls and ${toolResults.length} results, expected ${calls}`);
      }
      toolResults.forEach((toolResult, i) => {
        const call = result.toolCalls[i]!;
        if (call.id !== callId(i) || call.function.arguments !== callArguments(i)) {
          throw new Error(`${label}: call ${i} is ${JSON.stringify(call)}`);
        }
        if (toolResult.toolCallId !== callId(i) || toolResult.returnValue.isError || toolResult.returnValue.output !== TOOL_OUTPUT) {
          throw new Error(`${label}: result ${i} is ${JSON.stringify(toolResult)}`);
        }
      });
    },
  };
}
