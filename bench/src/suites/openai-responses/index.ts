/**
 * The `openai-responses` suite: what `OpenAIResponsesChatProvider` costs next to the official SDK's
 * own stream (`responses.create`), over real HTTP from a local server in a process of its own.
 *
 * @module
 */
import type { Suite } from '../../harness.js';

/** One run takes 1–4 s (mostly the SDK's SSE parsing): 1 warm-up + 2 timed runs per process. */
const RUNS = { warmup: 1, timed: 2 };

export const openAIResponsesSuite: Suite = {
  name: 'openai-responses',
  title: 'OpenAIResponsesChatProvider stream vs the bare openai SDK stream (responses.create)',
  workload:
    'one streamed Responses API response of 100,000 text deltas in 100 message items and 100 function-call items (one after every 1,000 text deltas, arguments in 3 deltas), with every event the API sends around them, then response.completed with usage, from a local server on 127.0.0.1 in its own process',
  baseline: 'sdk',
  variants: [
    {
      name: 'sdk',
      description: '`for await` over `client.responses.create({ stream: true })`, counting text, calls and arguments',
      load: async () => ({ prepare: (await import('./variants.js')).prepareSdk }),
      maxRuns: RUNS,
    },
    {
      name: 'provider',
      description: '`OpenAIResponsesChatProvider.generate()` and `for await` over its parts',
      load: async () => ({ prepare: (await import('./variants.js')).prepareProvider }),
      maxRuns: RUNS,
    },
  ],
  targets: [{ variant: 'provider', baseline: 'sdk', maxRatio: 1.05 }],
};
