/**
 * The `ai-sdk` suite: what `@kosong/provider-ai-sdk` costs over an AI SDK model's own stream, and a
 * `step()` through it next to the AI SDK's own `streamText`, with the same `@ai-sdk/openai` model
 * over real HTTP from a local server in a process of its own.
 *
 * @module
 */
import type { Suite } from '../../harness.js';
import { AI_SDK_RESPONSE } from './workload.js';

/** One `streamText` run takes about a second: 1 warm-up + 2 timed runs per process for every variant. */
const RUNS = { warmup: 1, timed: 2 };

export const aiSdkSuite: Suite = {
  name: 'ai-sdk',
  title: 'The AI SDK bridge: vs the model’s bare doStream, and step() vs the AI SDK’s streamText',
  workload:
    `one streamed Chat Completions response of ${AI_SDK_RESPONSE.textDeltas.toLocaleString('en')} text chunks and ${AI_SDK_RESPONSE.toolCalls} tool calls ` +
    '(spread evenly, arguments in 3 chunks), then finish and usage, from a local server on 127.0.0.1 in its own process, read by `@ai-sdk/openai` (`createOpenAI().chat`)',
  baseline: 'do-stream',
  variants: [
    {
      name: 'do-stream',
      description: "the model's `doStream`, its stream of parts read bare (counting text, calls and arguments)",
      load: async () => ({ prepare: (await import('./variants.js')).prepareDoStream }),
      maxRuns: RUNS,
    },
    {
      name: 'bridge',
      description: '`aiSdkProvider(model).generate()` and `for await` over its kosong parts',
      load: async () => ({ prepare: (await import('./variants.js')).prepareBridge }),
      maxRuns: RUNS,
    },
    {
      name: 'bridge-step',
      description: '`step()` through the bridge, a tool per call, `await result.toolResults()`',
      load: async () => ({ prepare: (await import('./variants.js')).prepareBridgeStep }),
      maxRuns: RUNS,
    },
    {
      name: 'stream-text',
      description: "the AI SDK's `streamText` (ai 7) with the same model and tool, `fullStream` consumed once",
      load: async () => ({ prepare: (await import('./variants.js')).prepareStreamText }),
      maxRuns: RUNS,
      baseline: 'bridge-step',
    },
  ],
  comparisons: [['bridge-step', 'stream-text']],
  metrics: [{ key: 'firstToolMs', label: 'first tool start (ms)', decimals: 1 }],
  targets: [{ variant: 'bridge', baseline: 'do-stream', maxRatio: 1.05 }],
};
