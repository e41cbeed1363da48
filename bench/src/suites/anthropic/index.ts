/**
 * The `anthropic` suite: what `AnthropicChatProvider` costs next to the official SDK's own stream,
 * over real HTTP from a local server in a process of its own.
 *
 * @module
 */
import type { Suite } from '../../harness.js';

/** One run takes about a second (mostly the SDK's SSE parsing): 1 warm-up + 2 timed runs per process. */
const RUNS = { warmup: 1, timed: 2 };

export const anthropicSuite: Suite = {
  name: 'anthropic',
  title: 'AnthropicChatProvider stream vs the bare @anthropic-ai/sdk stream',
  workload:
    'one streamed Messages API response of 100,000 text deltas in 100 text blocks, each followed by a tool_use block (input in 3 fragments), from a local server on 127.0.0.1 in its own process',
  baseline: 'sdk',
  variants: [
    {
      name: 'sdk',
      description: '`for await` over `client.messages.create({ stream: true })`, counting text and tool input',
      load: async () => ({ prepare: (await import('./variants.js')).prepareSdk }),
      maxRuns: RUNS,
    },
    {
      name: 'provider',
      description: '`AnthropicChatProvider.generate()` and `for await` over its parts',
      load: async () => ({ prepare: (await import('./variants.js')).prepareProvider }),
      maxRuns: RUNS,
    },
  ],
  targets: [{ variant: 'provider', baseline: 'sdk', maxRatio: 1.05 }],
};
