/**
 * `@kosong/plugin-otel`: OpenTelemetry GenAI spans and metrics for kosong steps, built only on the
 * public `StepHooks` API and `@opentelemetry/api`.
 *
 * - {@link otelPlugin}: the kernel plugin;
 * - {@link OtelStepHooks}: the same telemetry as hooks, for plain `step()` calls;
 * - model fallback switches (the step hook `onProviderSwitch`, e.g. from `@kosong/provider-fallback`) as span events;
 * - every attribute and metric name, and the pinned convention version ({@link GEN_AI_CONVENTIONS_VERSION}).
 *
 * @packageDocumentation
 */
export { otelPlugin } from './otel-plugin.js';
export { OtelStepHooks } from './otel-step-hooks.js';
export { DEFAULT_CONTENT_MAX_LENGTH, DEFAULT_PLUGIN_NAME, OtelPluginOptions } from './options.js';
export { errorTypeOf } from './error-type.js';
export { TRUNCATION_MARKER } from './content.js';
export { INSTRUMENTATION_SCOPE_NAME, INSTRUMENTATION_SCOPE_VERSION } from './scope.js';
export * from './conventions.js';
