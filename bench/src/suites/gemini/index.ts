/**
 * The `gemini` suite: what `GeminiChatProvider` adds on top of (or saves over) the official
 * `@google/genai` SDK stream, over real HTTP from a local server in its own process.
 *
 * @module
 */
import type { Suite } from '../../harness.js';
import { CALLS, TEXT_EVENTS } from './workload.js';

/** One run takes seconds (mostly the SDK's SSE parsing): 1 warm-up + 2 timed runs per process. */
const RUNS = { warmup: 1, timed: 2 };

export const geminiSuite: Suite = {
  name: 'gemini',
  title: 'GeminiChatProvider stream vs the bare @google/genai SDK stream',
  workload: `one streamed generateContent response of ${TEXT_EVENTS.toLocaleString('en')} text events and ${CALLS} function calls (plus a STOP event with usage) from a local server on 127.0.0.1 in its own process`,
  baseline: 'sdk',
  variants: [
    {
      name: 'sdk',
      description: '`for await` over `ai.models.generateContentStream()`, reading text and function calls of each chunk',
      load: async () => ({ prepare: (await import('./variants.js')).prepareSdk }),
      maxRuns: RUNS,
    },
    {
      name: 'provider',
      description: '`GeminiChatProvider.generate()` and `for await` over its parts (the SDK sends, `eventsource-parser` reads the body)',
      load: async () => ({ prepare: (await import('./variants.js')).prepareProvider }),
      maxRuns: RUNS,
    },
  ],
  targets: [{ variant: 'provider', baseline: 'sdk', maxRatio: 1.05 }],
};
