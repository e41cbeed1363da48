/**
 * `kosong`: `step()` over the MockChatProvider stream, then `await result.toolResults()`. The tool
 * parses its arguments and resolves at once.
 *
 * @module
 */
import {
  extractText,
  parseToolArguments,
  step,
  toolError,
  toolOk,
  type ChatProvider,
  type StepResult,
  type ToolResult,
  type Toolset,
} from '@kosong/core';
import { MockChatProvider } from '@kosong/provider-echo';
import type { PreparedVariant } from '../../harness.js';
import { callArguments, callId, kosongParts, TEXT_LENGTH, TOOL_CALLS, TOOL_NAME, TOOL_OUTPUT, toolParameters } from './workload.js';

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
 * The workload through any way of running a kosong step, then `await result.toolResults()`,
 * verified the same way (text, calls, results in call order). `label` names the variant in errors.
 */
export function prepareStep(label: string, start: StepStarter): PreparedVariant<Output> {
  const provider = new MockChatProvider(kosongParts(), { finishReason: 'tool_calls' });
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
      const textLength = extractText(result.message).length;
      if (textLength !== TEXT_LENGTH) throw new Error(`${label}: text length ${textLength}, expected ${TEXT_LENGTH}`);
      if (ran !== TOOL_CALLS) throw new Error(`${label}: ${ran} tools executed, expected ${TOOL_CALLS}`);
      if (result.toolCalls.length !== TOOL_CALLS || toolResults.length !== TOOL_CALLS) {
        throw new Error(`${label}: ${result.toolCalls.length} calls and ${toolResults.length} results, expected ${TOOL_CALLS}`);
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
