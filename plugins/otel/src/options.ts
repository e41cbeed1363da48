import type { MeterProvider, TracerProvider } from '@opentelemetry/api';

/** Options of `otelPlugin` (and of `OtelStepHooks`). Every field is optional. */
export interface OtelPluginOptions {
  /** The plugin's name in the kernel and in hook-error reports. Default `otel`. */
  readonly name?: string | undefined;
  /**
   * Where spans go. Default: the global tracer provider of `@opentelemetry/api` (a proxy, so an SDK
   * registered later is still used).
   */
  readonly tracerProvider?: TracerProvider | undefined;
  /**
   * Where metrics go. Default: the global meter provider of `@opentelemetry/api`, as registered when
   * the plugin is set up (the metrics API has no proxy: register the SDK before `kernel.use`).
   */
  readonly meterProvider?: MeterProvider | undefined;
  /**
   * Record prompt and output content: `gen_ai.input.messages` and `gen_ai.output.messages` on step
   * spans, `gen_ai.tool.call.arguments` and `gen_ai.tool.call.result` (and a tool error's message)
   * on tool spans. It may hold personal data and secrets. Default `false`: no content at all.
   */
  readonly captureContent?: boolean | undefined;
  /**
   * Cap, in characters of content, of each captured attribute (see `captureContent`). Longer content
   * is cut and marked, keeping the JSON valid. Default 16 384.
   */
  readonly contentMaxLength?: number | undefined;
  /**
   * Add `kosong.tenant.id` to metric points too (spans always carry it). One time series per tenant:
   * enable it only when the number of tenants is bounded. Default `false`.
   */
  readonly tenantInMetrics?: boolean | undefined;
}

/**
 * Service identifier of the {@link OtelPluginOptions} an `OtelStepHooks` created by the kernel gets
 * (`otelPlugin` binds the options it was given).
 */
export const OtelPluginOptions: unique symbol = Symbol.for('kosong.plugin-otel.OtelPluginOptions');

/** Default of {@link OtelPluginOptions.contentMaxLength}. */
export const DEFAULT_CONTENT_MAX_LENGTH = 16_384;

/** Default of {@link OtelPluginOptions.name}. */
export const DEFAULT_PLUGIN_NAME = 'otel';
