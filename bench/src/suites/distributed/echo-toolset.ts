import { toolOk, type ToolCall, type ToolContext, type ToolResult, type Toolset } from '@kosong/core';
import { toolCancelled } from '@kosong/core/toolset-kit';

/**
 * The benchmark's tools: `echo` answers at once with its arguments; `wait` waits for its abort and
 * calls `onAbort` with the wall-clock time (ms since the epoch, with a fraction) its signal fired.
 */
export function benchToolset(onAbort: (at: number) => void = () => undefined): Toolset {
  return {
    tools: [
      { name: 'echo', description: 'Returns its arguments.', parameters: { type: 'object' } },
      { name: 'wait', description: 'Waits until cancelled.', parameters: { type: 'object' } },
    ],
    handle(call: ToolCall, context: ToolContext): ToolResult | Promise<ToolResult> {
      if (call.function.name !== 'wait') return { toolCallId: call.id, returnValue: toolOk({ output: call.function.arguments ?? '' }) };
      return new Promise((resolve) => {
        context.signal.addEventListener('abort', () => {
          onAbort(performance.timeOrigin + performance.now());
          resolve({ toolCallId: call.id, returnValue: toolCancelled('wait', context.signal.reason) });
        });
      });
    },
  };
}
