/**
 * `kosong`: `step()` over the MockChatProvider stream, then `await result.toolResults()`. The tool
 * parses its arguments and resolves at once.
 *
 * @module
 */
import { extractText, parseToolArguments, step, toolError, toolOk, type StepResult, type ToolResult, type Toolset } from '@kosong/core';
import { MockChatProvider } from '@kosong/provider-echo';
import type { PreparedVariant } from '../../harness.js';
import { callArguments, callId, kosongParts, TEXT_LENGTH, TOOL_CALLS, TOOL_NAME, TOOL_OUTPUT, toolParameters } from './workload.js';

interface Output {
  readonly result: StepResult;
  readonly toolResults: readonly ToolResult[];
  readonly executed: number;
}

export function prepare(): PreparedVariant<Output> {
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
  return {
    async run() {
      executed = 0;
      const result = await step({ provider, systemPrompt: 'You are a benchmark.', toolset, history: [] });
      const toolResults = await result.toolResults();
      return { result, toolResults, executed };
    },
    verify({ result, toolResults, executed: ran }) {
      const textLength = extractText(result.message).length;
      if (textLength !== TEXT_LENGTH) throw new Error(`kosong: text length ${textLength}, expected ${TEXT_LENGTH}`);
      if (ran !== TOOL_CALLS) throw new Error(`kosong: ${ran} tools executed, expected ${TOOL_CALLS}`);
      if (result.toolCalls.length !== TOOL_CALLS || toolResults.length !== TOOL_CALLS) {
        throw new Error(`kosong: ${result.toolCalls.length} calls and ${toolResults.length} results, expected ${TOOL_CALLS}`);
      }
      toolResults.forEach((toolResult, i) => {
        const call = result.toolCalls[i]!;
        if (call.id !== callId(i) || call.function.arguments !== callArguments(i)) {
          throw new Error(`kosong: call ${i} is ${JSON.stringify(call)}`);
        }
        if (toolResult.toolCallId !== callId(i) || toolResult.returnValue.isError || toolResult.returnValue.output !== TOOL_OUTPUT) {
          throw new Error(`kosong: result ${i} is ${JSON.stringify(toolResult)}`);
        }
      });
    },
  };
}
