/**
 * The `ai-sdk` suite: what `@kosong/provider-ai-sdk` costs over an AI SDK model's own stream, and a
 * `step()` through it next to the AI SDK's own `streamText`, with the same `@ai-sdk/openai` model
 * over real HTTP from a local server in a process of its own.
 *
 * @module
 */
import type { Suite, VariantEntry } from '../../harness.js';
import type * as Variants from './variants.js';
import { AI_SDK_RESPONSE } from './workload.js';

/** One `streamText` run takes about a second: at most 1 warm-up + 2 timed runs per process. */
const STREAM_TEXT_RUNS = { warmup: 1, timed: 2 };

/**
 * A `doStream` or bridge run takes 0.15–0.3 s, and its first few runs in a process are the SDK's
 * code still being compiled (784, 532, 292 ms in one process): 4 warm-up + 5 timed runs per process,
 * so that the ratio is the bridge's cost and not the JIT's.
 */
const STREAM_RUNS = { warmup: 4, timed: 5 };

/** A variant whose module is `variants.ts`, prepared by its export `prepare`. */
function variant(name: string, description: string, prepare: keyof typeof Variants): VariantEntry {
  return { name, description, load: async () => ({ prepare: (await import('./variants.js'))[prepare] }), minRuns: STREAM_RUNS, maxRuns: STREAM_RUNS };
}

export const aiSdkSuite: Suite = {
  name: 'ai-sdk',
  title: 'The AI SDK bridge: vs the model’s bare doStream, and step() vs the AI SDK’s streamText',
  workload:
    `one streamed Chat Completions response of ${AI_SDK_RESPONSE.textDeltas.toLocaleString('en')} text chunks and ${AI_SDK_RESPONSE.toolCalls} tool calls ` +
    '(spread evenly, arguments in 3 chunks), then finish and usage, from a local server on 127.0.0.1 in its own process, read by `@ai-sdk/openai` (`createOpenAI().chat`)',
  baseline: 'do-stream',
  variants: [
    variant('do-stream', "the model's `doStream`, its stream of parts read bare (counting text, calls and arguments)", 'prepareDoStream'),
    variant('bridge', '`aiSdkProvider(model).generate()` and `for await` over its kosong parts', 'prepareBridge'),
    variant('bridge-step', '`step()` through the bridge, a tool per call, `await result.toolResults()`', 'prepareBridgeStep'),
    {
      name: 'stream-text',
      description: "the AI SDK's `streamText` (ai 6, of the root install) with the same model and tool, `fullStream` consumed once",
      load: async () => ({ prepare: (await import('./variants.js')).prepareStreamText }),
      maxRuns: STREAM_TEXT_RUNS,
      baseline: 'bridge-step',
    },
  ],
  comparisons: [['bridge-step', 'stream-text']],
  metrics: [{ key: 'firstToolMs', label: 'first tool start (ms)', decimals: 1 }],
  targets: [{ variant: 'bridge', baseline: 'do-stream', maxRatio: 1.05 }],
};
