/**
 * Helpers of the plugin's tests: a real OpenTelemetry SDK pipeline (in-memory span exporter, a
 * manually collected metric reader) and a kernel wired with the plugin.
 */
import {
  Kernel,
  definePlugin,
  textPart,
  toolCall,
  toolCallPart,
  toolError,
  toolOk,
  type ChatProvider,
  type HookErrorReport,
  type Plugin,
  type StreamedMessagePart,
  type ToolCall,
  type ToolContext,
  type ToolResult,
  type Toolset,
} from '@kosong/core';
import { SpanStatusCode, type AttributeValue } from '@opentelemetry/api';
import { MetricReader, MeterProvider, type DataPoint, type Histogram, type MetricData } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { otelPlugin } from '../otel-plugin.js';
import type { OtelPluginOptions } from '../options.js';

/** A metric reader collected by hand (`collect()`), never on a timer. */
export class ManualMetricReader extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

/** A tracer provider and a meter provider of the real SDK, exporting to memory. */
export class Telemetry {
  readonly exporter = new InMemorySpanExporter();
  readonly tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(this.exporter)] });
  readonly reader: ManualMetricReader;
  readonly meterProvider: MeterProvider;

  /** `cardinalityLimit`: metric series kept per instrument (the SDK's default is 2,000; past it points go to an overflow series). */
  constructor({ cardinalityLimit }: { readonly cardinalityLimit?: number } = {}) {
    this.reader = new ManualMetricReader(cardinalityLimit === undefined ? {} : { cardinalitySelector: () => cardinalityLimit });
    this.meterProvider = new MeterProvider({ readers: [this.reader] });
  }

  /** The plugin's options pointing at these providers, plus `extra`. */
  options(extra: OtelPluginOptions = {}): OtelPluginOptions {
    return { tracerProvider: this.tracerProvider, meterProvider: this.meterProvider, ...extra };
  }

  /** Every span ended so far, in end order. */
  spans(): ReadableSpan[] {
    return this.exporter.getFinishedSpans();
  }

  /** The only ended span whose name is `name`. */
  span(name: string): ReadableSpan {
    const found = this.spans().filter((s) => s.name === name);
    if (found.length !== 1) throw new Error(`expected one span "${name}", got ${found.length} (${this.spans().map((s) => s.name).join(', ')})`);
    return found[0]!;
  }

  /** Every metric collected now, by name. */
  async metrics(): Promise<Map<string, MetricData>> {
    const { resourceMetrics, errors } = await this.reader.collect();
    if (errors.length > 0) throw new AggregateError(errors, 'metric collection failed');
    const byName = new Map<string, MetricData>();
    for (const scope of resourceMetrics.scopeMetrics) for (const metric of scope.metrics) byName.set(metric.descriptor.name, metric);
    return byName;
  }

  async shutdown(): Promise<void> {
    await Promise.all([this.tracerProvider.shutdown(), this.meterProvider.shutdown()]);
  }
}

/** The data points of a metric whose attributes include `match`. */
export function pointsOf(metric: MetricData | undefined, match: Record<string, AttributeValue> = {}): DataPoint<number | Histogram>[] {
  if (!metric) return [];
  const points = metric.dataPoints as DataPoint<number | Histogram>[];
  return points.filter((p) => Object.entries(match).every(([key, value]) => p.attributes[key] === value));
}

/** The sum of a counter's points, or of a histogram's recorded values, matching `match`. */
export function sumOf(metric: MetricData | undefined, match: Record<string, AttributeValue> = {}): number {
  return pointsOf(metric, match).reduce((total, p) => total + (typeof p.value === 'number' ? p.value : (p.value.sum ?? 0)), 0);
}

/** How many values a histogram recorded in points matching `match`. */
export function countOf(metric: MetricData | undefined, match: Record<string, AttributeValue> = {}): number {
  return pointsOf(metric, match).reduce((total, p) => total + (typeof p.value === 'number' ? 0 : p.value.count), 0);
}

/** The span's parent span id, if it has a parent. */
export function parentOf(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId;
}

/** The span's own id. */
export function idOf(span: ReadableSpan): string {
  return span.spanContext().spanId;
}

/** Whether the span ended with an error status. */
export function isError(span: ReadableSpan): boolean {
  return span.status.code === SpanStatusCode.ERROR;
}

/** The history every test sends. */
export const history = [{ role: 'user' as const, content: [textPart('What is 1 + 2?')] }];

/** A complete tool call (arguments streamed in one fragment after the call part). */
export function callParts(id: string, name: string, args: string): StreamedMessagePart[] {
  return [toolCall(id, name, null), toolCallPart(args)];
}

/** What a test tool does with one call. */
export type ToolBehaviour = 'ok' | 'error' | 'throw' | 'untilAborted' | 'ignoreAbort' | { readonly delayMs: number };

/** A toolset of tools `add` and `fail`, acting per call as `behaviour` says (default: `ok` at once). */
export function testToolset(behaviour: (call: ToolCall) => ToolBehaviour = () => 'ok'): Toolset {
  return {
    tools: [
      { name: 'add', description: 'Adds.', parameters: { type: 'object' } },
      { name: 'fail', description: 'Fails.', parameters: { type: 'object' } },
    ],
    handle(call: ToolCall, context: ToolContext): ToolResult | Promise<ToolResult> {
      const ok = (): ToolResult => ({ toolCallId: call.id, returnValue: toolOk({ output: `result of ${call.id}` }) });
      const how = behaviour(call);
      switch (how) {
        case 'ok':
          return ok();
        case 'error':
          return { toolCallId: call.id, returnValue: toolError({ message: `secret detail of ${call.id}`, brief: 'failed' }) };
        case 'throw':
          throw new Error(`tool ${call.id} exploded`);
        case 'untilAborted':
          return new Promise((resolve) => context.signal.addEventListener('abort', () => resolve(ok()), { once: true }));
        case 'ignoreAbort':
          return new Promise<ToolResult>(() => undefined);
        default:
          return new Promise((resolve) => setTimeout(() => resolve(ok()), how.delayMs));
      }
    },
  };
}

/** A kernel with `provider` and `toolset` bound, the otel plugin, any `extra` plugins, and a hook-error sink collecting reports. */
export async function kernelWith(
  telemetry: Telemetry,
  provider: ChatProvider,
  toolset: Toolset,
  { otel = {}, extra = [], cleanupTimeoutMs }: { otel?: OtelPluginOptions; extra?: Plugin[]; cleanupTimeoutMs?: number } = {},
): Promise<{ kernel: Kernel; reports: HookErrorReport[] }> {
  const kernel = new Kernel(cleanupTimeoutMs === undefined ? {} : { cleanupTimeoutMs });
  const reports: HookErrorReport[] = [];
  await kernel.use(
    definePlugin({
      name: 'test-setup',
      setup(ctx) {
        ctx.bindChatProvider('mock', provider);
        ctx.bindToolset(toolset);
        ctx.bindHookErrorSink({ report: (report) => void reports.push(report) });
      },
    }),
    otelPlugin(telemetry.options(otel)),
    ...extra,
  );
  return { kernel, reports };
}

/** The rejection of a promise that must reject. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}
