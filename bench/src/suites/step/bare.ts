/**
 * `bare`: the floor. A `for await` over the MockChatProvider stream that only counts the parts.
 *
 * @module
 */
import { MockChatProvider } from '@kosong/provider-echo';
import type { PreparedVariant } from '../../harness.js';
import { argumentFragments, kosongParts, TEXT_DELTAS, TOOL_CALLS } from './workload.js';

interface Counts {
  readonly parts: number;
  readonly text: number;
  readonly toolCalls: number;
}

export function prepare(): PreparedVariant<Counts> {
  const provider = new MockChatProvider(kosongParts());
  const expectedParts = TEXT_DELTAS + TOOL_CALLS * (1 + argumentFragments(0).length);
  return {
    async run() {
      const stream = await provider.generate('', [], []);
      let parts = 0;
      let text = 0;
      let toolCalls = 0;
      for await (const part of stream) {
        parts++;
        if (part.type === 'text') text++;
        else if (part.type === 'function') toolCalls++;
      }
      return { parts, text, toolCalls };
    },
    verify(counts) {
      if (counts.parts !== expectedParts || counts.text !== TEXT_DELTAS || counts.toolCalls !== TOOL_CALLS) {
        throw new Error(`bare: expected ${expectedParts} parts, ${TEXT_DELTAS} text, ${TOOL_CALLS} calls; got ${JSON.stringify(counts)}`);
      }
    },
  };
}
