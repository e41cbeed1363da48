/**
 * Variants of the `events` suite: one step of {@link CALLS} tool calls (no text), without hooks and
 * with one hooks object listening to `onToolCall` and `onToolResult` (two events per call). The
 * second also measures, in its own process, what one event costs: steps with and without the hook,
 * alternated, the difference of their medians divided by the events.
 *
 * @module
 */
import { step, type StepHooks } from '@kosong/core';
import type { PreparedVariant } from '../../harness.js';
import { prepareStep } from '../step/kosong.js';
import type { ResponseShape } from '../step/workload.js';

type StepOutput = ReturnType<typeof prepareStep> extends PreparedVariant<infer O> ? O : never;

/** Tool calls of the step. */
export const CALLS = 1_000;
const SHAPE: ResponseShape = { textDeltas: 0, toolCalls: CALLS };
/** Events the hook hears per step: `onToolCall` and `onToolResult` for every call. */
const EVENTS = 2 * CALLS;
/** Alternated pairs of steps (without, with the hook) per measurement. */
const PAIRS = 21;

let heard = 0;
const noOp: StepHooks = {
  onToolCall: () => void heard++,
  onToolResult: () => void heard++,
};

function prepareSteps(hooks: boolean) {
  return prepareStep(
    hooks ? 'step+hook' : 'step',
    (provider, toolset) => () => step({ provider, systemPrompt: 'You are a benchmark.', toolset, history: [], ...(hooks ? { hooks: [{ name: 'no-op', hooks: noOp }] } : {}) }),
    SHAPE,
  );
}

/** The step without hooks. */
export function prepareWithoutHooks(): PreparedVariant {
  return prepareSteps(false);
}

/** The step with a hook on two events per call; `measure` gives the cost of one event. */
export function prepareWithHook(): PreparedVariant<StepOutput> {
  const withHook = prepareSteps(true);
  const without = prepareSteps(false);
  const timed = async (variant: PreparedVariant<StepOutput>): Promise<number> => {
    const start = performance.now();
    variant.verify(await variant.run());
    return performance.now() - start;
  };
  return {
    async run() {
      heard = 0;
      return withHook.run();
    },
    verify(output) {
      withHook.verify(output);
      if (heard !== EVENTS) throw new Error(`step+hook: the hook heard ${heard} events, expected ${EVENTS}`);
    },
    async measure() {
      const bare: number[] = [];
      const hooked: number[] = [];
      for (let i = 0; i < PAIRS; i++) {
        bare.push(await timed(without));
        hooked.push(await timed(withHook));
      }
      const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
      return { eventNs: ((median(hooked) - median(bare)) * 1e6) / EVENTS };
    },
  };
}
