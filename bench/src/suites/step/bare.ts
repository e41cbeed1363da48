/**
 * `bare`: the floor. A `for await` over the MockChatProvider stream that only counts the parts.
 *
 * @module
 */
import { MockChatProvider } from '@kosong/provider-echo';
import type { PreparedVariant } from '../../harness.js';
import { partCount, responseParts, STEP_RESPONSE, type ResponseShape } from './workload.js';

interface Counts {
  readonly parts: number;
  readonly text: number;
  readonly toolCalls: number;
}

export function prepare(): PreparedVariant<Counts> {
  return prepareBare(STEP_RESPONSE);
}

/** The floor for a response of this shape. */
export function prepareBare(shape: ResponseShape): PreparedVariant<Counts> {
  const provider = new MockChatProvider(responseParts(shape));
  const expectedParts = partCount(shape);
  const { textDeltas, toolCalls: calls } = shape;
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
      if (counts.parts !== expectedParts || counts.text !== textDeltas || counts.toolCalls !== calls) {
        throw new Error(`bare: expected ${expectedParts} parts, ${textDeltas} text, ${calls} calls; got ${JSON.stringify(counts)}`);
      }
    },
  };
}
