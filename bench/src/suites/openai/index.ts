/**
 * The `openai` suite: what `OpenAIChatProvider` adds on top of the official SDK stream, over real
 * HTTP from a local server.
 *
 * @module
 */
import type { Suite } from '../../harness.js';
import { CHUNKS } from './variants.js';

/** One run takes 2–3 s (mostly the SDK's SSE parsing): 1 warm-up + 2 timed runs per process. */
const RUNS = { warmup: 1, timed: 2 };

export const openAISuite: Suite = {
  name: 'openai',
  title: 'OpenAIChatProvider stream vs the bare openai SDK stream',
  workload: `one streamed Chat Completions response of ${CHUNKS.toLocaleString('en')} text chunks (plus finish and usage) from a local server on 127.0.0.1 in the same process`,
  baseline: 'sdk',
  variants: [
    {
      name: 'sdk',
      description: '`for await` over `client.chat.completions.create({ stream: true })`',
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
  targets: [{ variant: 'provider', baseline: 'sdk', maxRatio: 1.2 }],
};
