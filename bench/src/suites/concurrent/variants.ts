/**
 * Variants of the `concurrent` suite: {@link STEPS} steps at once, each streaming 5 parts (a tool call,
 * its arguments in 3 fragments, a text delta that completes the call) and then waiting mid-stream at
 * a gate until every step has got there; then the gate opens and every step ends. The floor does the
 * same with bare streams.
 *
 * After each timed run, an untimed wave measures the heap per in-flight step: the heap used (after a
 * full collection) while all steps wait at the gate, less the heap before the wave, per step.
 *
 * @module
 */
import { step, textPart, toolCall, toolCallPart, toolOk, type StepResult, type StreamedMessagePart, type Toolset } from '@kosong/core';
import type { PreparedVariant } from '../../harness.js';
import { Gate, GatedProvider } from './gated-provider.js';

/** Steps in flight at once. */
export const STEPS = 10_000;

/** The parts of every step: a call, its 3 argument fragments, a text delta (which completes the call). */
function parts(): StreamedMessagePart[] {
  return [toolCall('call_0', 'noop', null), toolCallPart('{"i":'), toolCallPart('0'), toolCallPart('}'), textPart('done')];
}

interface Wave {
  /** Starts every step; resolves when all are done, with what each produced. */
  run(): Promise<unknown[]>;
  verify(outputs: unknown[]): void;
}

/** Runs waves of {@link STEPS} gated steps; `start` starts one step and resolves with its output. */
function prepareWaves(start: (provider: GatedProvider) => Promise<unknown>, verifyOne: (output: unknown) => void): PreparedVariant<unknown[]> {
  const gate = new Gate();
  const provider = new GatedProvider(parts(), gate);
  const wave = async (whileInFlight?: () => void): Promise<unknown[]> => {
    const allWaiting = gate.close(STEPS);
    const steps: Promise<unknown>[] = [];
    for (let i = 0; i < STEPS; i++) steps.push(start(provider));
    await allWaiting;
    whileInFlight?.();
    gate.open();
    return Promise.all(steps);
  };
  const waves: Wave = {
    run: () => wave(),
    verify(outputs) {
      if (outputs.length !== STEPS) throw new Error(`${outputs.length} steps ended, expected ${STEPS}`);
      for (const output of outputs) verifyOne(output);
    },
  };
  return {
    run: waves.run,
    verify: waves.verify,
    async measure() {
      const gc = (globalThis as { gc?: () => void }).gc;
      if (!gc) throw new Error('run with --expose-gc to measure the heap per step');
      gc();
      const before = process.memoryUsage().heapUsed;
      let during = 0;
      const outputs = await wave(() => {
        gc();
        during = process.memoryUsage().heapUsed;
      });
      waves.verify(outputs);
      return { heapPerStepKb: (during - before) / STEPS / 1024 };
    },
  };
}

/** The floor: a bare `for await` over each step's stream. */
export function prepareBare(): PreparedVariant<unknown[]> {
  return prepareWaves(
    async (provider) => {
      let count = 0;
      for await (const _part of await provider.generate()) count++;
      return count;
    },
    (count) => {
      if (count !== 5) throw new Error(`bare: ${String(count)} parts, expected 5`);
    },
  );
}

/** `step()` + `toolResults()`; the tool resolves at once. */
export function prepareSteps(): PreparedVariant<unknown[]> {
  const toolset: Toolset = {
    tools: [{ name: 'noop', description: 'Does nothing.', parameters: { type: 'object', properties: {} } }],
    handle: (call) => ({ toolCallId: call.id, returnValue: toolOk({ output: 'ok' }) }),
  };
  return prepareWaves(
    async (provider) => {
      const result: StepResult = await step({ provider, systemPrompt: 'You are a benchmark.', toolset, history: [] });
      return { result, toolResults: await result.toolResults() };
    },
    (output) => {
      const { result, toolResults } = output as { result: StepResult; toolResults: readonly { returnValue: { output: unknown } }[] };
      if (result.toolCalls.length !== 1 || toolResults[0]?.returnValue.output !== 'ok' || result.message.content.length !== 1) {
        throw new Error(`step: unexpected result ${JSON.stringify({ calls: result.toolCalls, toolResults, content: result.message.content })}`);
      }
    },
  );
}
