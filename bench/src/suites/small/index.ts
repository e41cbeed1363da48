/**
 * The `small` suite: many small steps one after the other, where the cost of a step around its parts
 * (events, hooks, futures, cleanup) and of telemetry and logging plugins shows most.
 *
 * @module
 */
import type { Suite } from '../../harness.js';
import { SMALL_RESPONSE, STEPS } from './variants.js';

const variants = async () => import('./variants.js');

export const smallSuite: Suite = {
  name: 'small',
  title: 'Small steps: 10 deltas + 2 tool calls, one step after the other',
  workload:
    `${STEPS.toLocaleString('en')} steps per run, one after the other, each one response of ${SMALL_RESPONSE.textDeltas} text deltas and ` +
    `${SMALL_RESPONSE.toolCalls} tool calls (arguments in 3 streamed fragments) from the MockChatProvider; the tool parses its arguments and resolves at once`,
  baseline: 'bare',
  variants: [
    { name: 'bare', description: '`for await` over each step\'s MockChatProvider stream, counting parts: the floor', load: async () => ({ prepare: (await variants()).prepareBareSteps }) },
    { name: 'step', description: '`step()` + `toolResults()`', load: async () => ({ prepare: (await variants()).prepareSteps }) },
    {
      name: 'runner',
      description: '`kernel.runner().step()` + `toolResults()`, provider and toolset from a plugin, no hooks',
      baseline: 'step',
      load: async () => ({ prepare: (await variants()).prepareRunnerSteps }),
    },
    {
      name: 'runner+10hooks',
      description: 'the runner with 10 hook plugins, each with all six hooks as no-ops',
      baseline: 'step',
      load: async () => ({ prepare: (await variants()).prepareRunnerWithHooksSteps }),
    },
    {
      name: 'runner+otel',
      description: 'the runner with `otelPlugin` on a real SDK tracer provider (batch processor, no-op exporter): 3 spans per step',
      baseline: 'runner',
      load: async () => ({ prepare: (await variants()).prepareRunnerWithOtelSteps }),
    },
    {
      name: 'runner+otel-sdk',
      description: 'the runner, no hooks, with the same 3 spans per step (same attributes, same tracer provider) made by hand with the SDK around the step and in the tool: the SDK\'s own share of runner+otel',
      baseline: 'runner',
      load: async () => ({ prepare: (await variants()).prepareRunnerWithBareSdkSteps }),
    },
    {
      name: 'runner+otel-hooks',
      description: 'the runner with one hooks object that has the hooks of `otelPlugin` (5 events and `runInContext`), each doing nothing: the runtime\'s share of runner+otel',
      baseline: 'runner',
      load: async () => ({ prepare: (await variants()).prepareRunnerWithOtelShapedHooksSteps }),
    },
    {
      name: 'runner+pino',
      description: 'the runner with `loggingPlugin` (pino, level info: 4 lines per step) writing to a sink that counts lines',
      baseline: 'runner',
      load: async () => ({ prepare: (await variants()).prepareRunnerWithPinoSteps }),
    },
  ],
  targets: [
    { variant: 'runner+10hooks', baseline: 'step', maxRatio: 1.3 },
    { variant: 'runner+otel', baseline: 'runner', maxRatio: 1.25 },
    { variant: 'runner+pino', baseline: 'runner', maxRatio: 1.25 },
  ],
};
