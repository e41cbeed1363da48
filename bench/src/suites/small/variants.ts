/**
 * Variants of the `small` suite: many small steps (a few text deltas and two tool calls each), one
 * after the other, through the bare stream, `step()`, a kernel runner, and a runner with ten no-op
 * hook plugins, the OpenTelemetry plugin or the pino logging plugin. On steps this small, what a
 * step costs around its parts (events, hooks, futures, cleanup) is most of its time.
 *
 * @module
 */
import { definePlugin, step, type StepHooks } from '@kosong/core';
import { loggingPlugin } from '@kosong/plugin-logging';
import type { PreparedVariant } from '../../harness.js';
import { repeated } from '../../repeated.js';
import { noOpHooks, prepareWithKernel } from '../kernel/variants.js';
import { prepareBareSdk } from '../otel/bare-sdk.js';
import { prepareTraced } from '../otel/variants.js';
import { prepareBare } from '../step/bare.js';
import { prepareStep } from '../step/kosong.js';
import type { ResponseShape } from '../step/workload.js';

/** One small step: 10 text deltas and 2 tool calls (arguments in 3 fragments each). */
export const SMALL_RESPONSE: ResponseShape = { textDeltas: 10, toolCalls: 2 };
/** Steps per timed run. */
export const STEPS = 2_000;

/** The bare stream of each step: the floor. */
export function prepareBareSteps(): PreparedVariant {
  return repeated(prepareBare(SMALL_RESPONSE), STEPS);
}

/** `step()` + `toolResults()`. */
export function prepareSteps(): PreparedVariant {
  const start = prepareStep('step', (provider, toolset) => () => step({ provider, systemPrompt: 'You are a benchmark.', toolset, history: [] }), SMALL_RESPONSE);
  return repeated(start, STEPS);
}

/** `kernel.runner().step()`, no hooks. */
export async function prepareRunnerSteps(): Promise<PreparedVariant> {
  return repeated(await prepareWithKernel('runner', [], SMALL_RESPONSE), STEPS);
}

/** The runner with ten hook plugins whose six hooks do nothing. */
export async function prepareRunnerWithHooksSteps(): Promise<PreparedVariant> {
  const plugins = Array.from({ length: 10 }, (_, i) => definePlugin({ name: `no-op hooks ${i + 1}`, setup: (ctx) => ctx.bindHooks(noOpHooks()) }));
  return repeated(await prepareWithKernel('runner+10hooks', plugins, SMALL_RESPONSE), STEPS);
}

/** The runner with the OpenTelemetry plugin (real SDK tracer provider, no-op exporter). */
export function prepareRunnerWithOtelSteps(): Promise<PreparedVariant> {
  return prepareTraced('runner+otel', false, SMALL_RESPONSE, STEPS);
}

/**
 * The runner with the same three spans per step made by hand with the SDK (same tracer provider, same
 * attributes), no plugin: the SDK's own share of `runner+otel`.
 */
export function prepareRunnerWithBareSdkSteps(): Promise<PreparedVariant> {
  return prepareBareSdk('runner+otel-sdk', SMALL_RESPONSE, STEPS);
}

/**
 * The runner with one hooks object that has the hooks `otelPlugin` has (step start, tool call, tool
 * result, step end, cleanup, and a `runInContext` that only runs the work), all doing nothing: what
 * the runtime charges a step for delivering them.
 */
export async function prepareRunnerWithOtelShapedHooksSteps(): Promise<PreparedVariant> {
  const hooks: StepHooks = {
    onStepStart() {},
    onToolCall() {},
    onToolResult() {},
    onStepEnd() {},
    onCleanup() {},
    runInContext: (_scope, run) => run(),
  };
  return repeated(await prepareWithKernel('runner+otel-hooks', [definePlugin({ name: 'no-op otel hooks', setup: (ctx) => ctx.bindHooks(hooks) })], SMALL_RESPONSE), STEPS);
}

/**
 * The runner with the pino logging plugin at `info` (a step start, a step end and one line per tool
 * result: 4 lines per step), written to a sink that only counts the lines (what pino builds is
 * measured, not the write to a file).
 */
export async function prepareRunnerWithPinoSteps(): Promise<PreparedVariant> {
  let lines = 0;
  const sink = { write: (_line: string) => void lines++ };
  const prepared = await prepareWithKernel('runner+pino', [loggingPlugin({ destination: sink, level: 'info' })], SMALL_RESPONSE);
  const steps = repeated(prepared, STEPS);
  return {
    async run() {
      lines = 0;
      return steps.run();
    },
    verify(outputs: unknown[]) {
      steps.verify(outputs);
      if (lines < 3 * STEPS) throw new Error(`runner+pino: ${lines} log lines for ${STEPS} steps, expected at least ${3 * STEPS}`);
    },
  };
}
