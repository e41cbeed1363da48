/**
 * The `openai` suite: what `OpenAIChatProvider` costs next to the official SDK's own stream, over
 * real HTTP from a local server in a process of its own.
 *
 * @module
 */
import type { Suite } from '../../harness.js';

/** One run takes 1–3 s (mostly the SDK's SSE parsing): 1 warm-up + 2 timed runs per process. */
const RUNS = { warmup: 1, timed: 2 };

export const openAISuite: Suite = {
  name: 'openai',
  title: 'OpenAIChatProvider stream vs the bare openai SDK stream',
  workload:
    'one streamed Chat Completions response of 100,000 text chunks and 100 tool calls (one after every 1,000 text chunks, arguments in 3 chunks), then finish and usage, from a local server on 127.0.0.1 in its own process',
  baseline: 'sdk',
  variants: [
    {
      name: 'sdk',
      description: '`for await` over `client.chat.completions.create({ stream: true })`, counting text, calls and arguments',
      load: async () => ({ prepare: (await import('./variants.js')).prepareSdk }),
      maxRuns: RUNS,
    },
    {
      name: 'provider',
      description: '`OpenAIChatProvider.generate()` and `for await` over its parts',
      load: async () => ({ prepare: (await import('./variants.js')).prepareProvider }),
      maxRuns: RUNS,
    },
  ],
  targets: [{ variant: 'provider', baseline: 'sdk', maxRatio: 0.6 }],
};
