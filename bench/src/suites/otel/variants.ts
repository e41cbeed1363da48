/**
 * Variants of the `otel` suite: the step suite's workload through a kernel runner, without and with
 * the OpenTelemetry plugin. Spans go to a real SDK tracer provider whose batch processor exports to
 * nowhere: every span is created, recorded and ended, and the export itself costs nothing.
 *
 * @module
 */
import { otelPlugin } from '@kosong/plugin-otel';
import type { PreparedVariant } from '../../harness.js';
import { prepareWithKernel } from '../kernel/variants.js';
import { STEP_RESPONSE, type ResponseShape } from '../step/workload.js';
import { repeated } from '../../repeated.js';
import { tracedProvider } from './traced-provider.js';

/** `kernel.runner().step()` without the plugin: the baseline. */
export function prepareRunner(): Promise<PreparedVariant> {
  return prepareWithKernel('runner', []);
}

/** `kernel.runner().step()` with the otel plugin. */
export function prepareRunnerWithOtel(): Promise<PreparedVariant> {
  return prepareTraced('runner+otel', false);
}

/** `kernel.runner().step()` with the otel plugin capturing content. */
export function prepareRunnerWithOtelContent(): Promise<PreparedVariant> {
  return prepareTraced('runner+otel+content', true);
}

/**
 * `steps` steps of a response of `shape` (default: one of the step suite's) through
 * `kernel.runner().step()` with the otel plugin; checks that each step ended its spans.
 */
export async function prepareTraced(label: string, captureContent: boolean, shape: ResponseShape = STEP_RESPONSE, steps = 1): Promise<PreparedVariant> {
  const { tracerProvider, counter } = tracedProvider();
  const prepared = repeated(await prepareWithKernel(label, [otelPlugin({ tracerProvider, captureContent })], shape), steps);
  const spans = steps * (1 + shape.toolCalls);
  return {
    async run() {
      counter.ended = 0;
      return prepared.run();
    },
    verify(output: unknown[]) {
      prepared.verify(output);
      if (counter.ended !== spans) throw new Error(`${label}: ${counter.ended} spans ended, expected ${spans}`);
    },
  };
}
