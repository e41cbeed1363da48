/**
 * The `otel` suite: what `@kosong/plugin-otel` adds to a step — a `chat` span, an `execute_tool` span
 * per tool call and the GenAI metrics — on the `step` suite's workload, through a kernel runner.
 *
 * @module
 */
import type { Suite } from '../../harness.js';
import { stepSuite } from '../step/index.js';

export const otelSuite: Suite = {
  name: 'otel',
  title: 'OpenTelemetry plugin: runner.step with vs without',
  workload: `${stepSuite.workload} (the step suite's workload, 101 spans per step)`,
  baseline: 'runner',
  variants: [
    {
      name: 'runner',
      description: '`kernel.runner().step()` + `toolResults()`, provider and toolset from a plugin, no hooks',
      load: async () => ({ prepare: (await import('./variants.js')).prepareRunner }),
    },
    {
      name: 'runner+otel',
      description: 'the same with `otelPlugin` on a real SDK tracer provider (batch processor, no-op exporter); global no-op meter',
      load: async () => ({ prepare: (await import('./variants.js')).prepareRunnerWithOtel }),
    },
    {
      name: 'runner+otel+content',
      description: 'the same with `captureContent: true` (input and output messages, tool arguments and results, capped at 16 KiB)',
      load: async () => ({ prepare: (await import('./variants.js')).prepareRunnerWithOtelContent }),
    },
  ],
  targets: [{ variant: 'runner+otel', baseline: 'runner', maxRatio: 1.2 }],
};
