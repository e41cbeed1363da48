/**
 * The `step` suite: one streamed model response with tool calls, through kosong's `step()`, the
 * bare stream (the floor) and the Vercel AI SDK.
 *
 * @module
 */
import type { Suite } from '../../harness.js';
import { loadPeerVariant } from '../../peers.js';
import { TEXT_DELTAS, TOOL_CALLS } from './workload.js';

export const stepSuite: Suite = {
  name: 'step',
  title: 'One step: streamed response with tool calls',
  workload:
    `one response of ${TEXT_DELTAS.toLocaleString('en')} text deltas and ${TOOL_CALLS} tool calls ` +
    `(one every ${(TEXT_DELTAS / TOOL_CALLS).toLocaleString('en')} deltas, arguments in 3 streamed fragments); ` +
    'the tool parses its arguments and resolves at once',
  baseline: 'bare',
  variants: [
    { name: 'bare', description: '`for await` over the MockChatProvider stream, counting parts', load: () => import('./bare.js') },
    { name: 'kosong', description: '`step()` + `await result.toolResults()`', load: () => import('./kosong.js') },
    {
      name: 'ai-sdk',
      description: '`streamText` (ai 7, MockLanguageModelV4), full stream consumed + tool results awaited',
      load: () => loadPeerVariant('step-ai-sdk.js'),
      fromPeers: true,
      // One run takes ~15 s on Node 20 (see bench/peers/src/step-ai-sdk.ts): no warm-up, one timed run per process.
      maxRuns: { warmup: 0, timed: 1 },
    },
  ],
  comparisons: [['kosong', 'ai-sdk']],
  targets: [{ variant: 'kosong', baseline: 'bare', maxRatio: 1.3 }],
};
