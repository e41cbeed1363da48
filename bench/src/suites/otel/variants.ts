/**
 * Variants of the `otel` suite: the step suite's workload through a kernel runner, without and with
 * the OpenTelemetry plugin. Spans go to a real SDK tracer provider whose batch processor exports to
 * nowhere: every span is created, recorded and ended, and the export itself costs nothing.
 *
 * @module
 */
import { otelPlugin } from '@kosong/plugin-otel';
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { PreparedVariant } from '../../harness.js';
import { prepareWithKernel } from '../kernel/variants.js';
import { STEP_RESPONSE, type ResponseShape } from '../step/workload.js';
import { repeated } from '../../repeated.js';

/** An exporter that drops every batch at once. */
class NoopSpanExporter implements SpanExporter {
  export(_spans: ReadableSpan[], resultCallback: Parameters<SpanExporter['export']>[1]): void {
    resultCallback({ code: 0 }); // ExportResultCode.SUCCESS
  }
  async shutdown(): Promise<void> {}
}

/** Counts ended spans (so `verify` can check the plugin really traced), nothing else. */
class EndedSpanCounter implements SpanProcessor {
  ended = 0;
  onStart(): void {}
  onEnd(): void {
    this.ended++;
  }
  async forceFlush(): Promise<void> {}
  async shutdown(): Promise<void> {}
}

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
  const counter = new EndedSpanCounter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(new NoopSpanExporter()), counter] });
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
