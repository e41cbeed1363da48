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
import { TOOL_CALLS } from '../step/workload.js';

/** Spans of one step: its `chat` span and one `execute_tool` span per call. */
const SPANS_PER_STEP = 1 + TOOL_CALLS;

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

async function prepareTraced(label: string, captureContent: boolean): Promise<PreparedVariant> {
  const counter = new EndedSpanCounter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(new NoopSpanExporter()), counter] });
  const prepared = await prepareWithKernel(label, [otelPlugin({ tracerProvider, captureContent })]);
  return {
    async run() {
      counter.ended = 0;
      return prepared.run();
    },
    verify(output) {
      prepared.verify(output);
      if (counter.ended !== SPANS_PER_STEP) throw new Error(`${label}: ${counter.ended} spans ended, expected ${SPANS_PER_STEP}`);
    },
  };
}
