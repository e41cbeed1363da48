/**
 * The tracer provider every traced bench variant uses: the real SDK's, with a batch processor that
 * exports to nowhere (every span is created, recorded and ended; the export itself costs nothing)
 * and a processor that counts ended spans, so a variant can check that it really traced.
 *
 * @module
 */
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace-base';

/** An exporter that drops every batch at once. */
class NoopSpanExporter implements SpanExporter {
  export(_spans: ReadableSpan[], resultCallback: Parameters<SpanExporter['export']>[1]): void {
    resultCallback({ code: 0 }); // ExportResultCode.SUCCESS
  }
  async shutdown(): Promise<void> {}
}

/** Counts ended spans, nothing else. */
export class EndedSpanCounter implements SpanProcessor {
  ended = 0;
  onStart(): void {}
  onEnd(): void {
    this.ended++;
  }
  async forceFlush(): Promise<void> {}
  async shutdown(): Promise<void> {}
}

/** A new SDK tracer provider (batch processor, no-op exporter) and the counter of the spans it ended. */
export function tracedProvider(): { readonly tracerProvider: BasicTracerProvider; readonly counter: EndedSpanCounter } {
  const counter = new EndedSpanCounter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(new NoopSpanExporter()), counter] });
  return { tracerProvider, counter };
}
