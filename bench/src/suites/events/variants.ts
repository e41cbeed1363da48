/**
 * Variants of the `events` suite: the step suite's response, without hooks and with one hooks object
 * listening to `onPart`, `onToolCall` and `onToolResult` (an event per streamed part, two per call).
 * The second also measures, in its own process, what one event costs — built (read-only: the per-part
 * event through accessors, the others frozen; the part frozen) and delivered through the step's guard,
 * the hook reading the event's part: steps with and without the hook, each on
 * parts made for it (as a provider's are: not frozen yet),
 * alternated, the difference of their median CPU times (user + system, so that other processes of a
 * loaded machine count less than in wall time) divided by the events of a step.
 *
 * @module
 */
import { step, type StepHooks } from '@kosong/core';
import type { PreparedVariant } from '../../harness.js';
import { prepareStep } from '../step/kosong.js';
import { partCount, STEP_RESPONSE } from '../step/workload.js';

type StepOutput = ReturnType<typeof prepareStep> extends PreparedVariant<infer O> ? O : never;

/** Events the hook hears per step: `onPart` for every part, `onToolCall` and `onToolResult` for every call. */
export const EVENTS = partCount(STEP_RESPONSE) + 2 * STEP_RESPONSE.toolCalls;
/** Alternated pairs of steps (without, with the hook) per measurement. */
export const PAIRS = 11;

let heard = 0;
const counting: StepHooks = {
  // Reads the part, as a hook on parts does (an event's fields are getters).
  onPart: (event) => {
    if (event.part.type !== undefined) heard++;
  },
  onToolCall: () => void heard++,
  onToolResult: () => void heard++,
};

function prepareSteps(hooks: boolean) {
  return prepareStep(hooks ? 'step+hook' : 'step', (provider, toolset) => () =>
    step({ provider, systemPrompt: 'You are a benchmark.', toolset, history: [], ...(hooks ? { hooks: [{ name: 'counting', hooks: counting }] } : {}) }),
  );
}

/** The step without hooks. */
export function prepareWithoutHooks(): PreparedVariant<StepOutput> {
  return prepareSteps(false);
}

/** The step with the counting hook; `measure` gives the cost of one event. */
export function prepareWithHook(): PreparedVariant<StepOutput> {
  const withHook = prepareSteps(true);
  const cpuMsOf = async (variant: PreparedVariant<StepOutput>, expectedEvents: number): Promise<number> => {
    heard = 0;
    globalThis.gc?.();
    const start = process.cpuUsage();
    const output = await variant.run();
    const { user, system } = process.cpuUsage(start);
    variant.verify(output);
    if (heard !== expectedEvents) throw new Error(`events: the hook heard ${heard} events, expected ${expectedEvents}`);
    return (user + system) / 1000;
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
        // Parts made for this pair (untimed), as a provider makes them: a part the hook saw is frozen, and freezing a fresh one costs more.
        bare.push(await cpuMsOf(prepareSteps(false), 0));
        hooked.push(await cpuMsOf(prepareSteps(true), EVENTS));
      }
      return { eventNs: ((median(hooked) - median(bare)) * 1e6) / EVENTS };
    },
  };
}

function median(values: readonly number[]): number {
  return [...values].sort((a, b) => a - b)[values.length >> 1]!;
}
