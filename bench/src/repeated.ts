/**
 * A variant whose timed run repeats another's, for workloads too small to time one by one (a small
 * step takes microseconds).
 *
 * @module
 */
import type { PreparedVariant } from './harness.js';

/** `variant` run `times` times in a row per timed run (one after the other, each output verified). */
export function repeated<Output>(variant: PreparedVariant<Output>, times: number): PreparedVariant<Output[]> {
  if (!Number.isInteger(times) || times < 1) throw new Error(`repeat count must be a whole number ≥ 1, got ${times}`);
  if (times === 1) {
    return { run: async () => [await variant.run()], verify: ([output]) => variant.verify(output!) };
  }
  return {
    async run() {
      const outputs: Output[] = [];
      for (let i = 0; i < times; i++) outputs.push(await variant.run());
      return outputs;
    },
    verify(outputs) {
      if (outputs.length !== times) throw new Error(`expected ${times} outputs, got ${outputs.length}`);
      for (const output of outputs) variant.verify(output);
    },
  };
}
