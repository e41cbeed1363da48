import { definePlugin, type Plugin } from '@kosong/core';
import { DEFAULT_PLUGIN_NAME, OtelPluginOptions } from './options.js';
import { OtelStepHooks } from './otel-step-hooks.js';

/**
 * A kernel plugin that traces and measures every step with OpenTelemetry, following the GenAI semantic
 * conventions (see `GEN_AI_CONVENTIONS_VERSION`). It is built only on the public `StepHooks` API: at
 * setup it binds its options (as {@link OtelPluginOptions}) and the {@link OtelStepHooks} class, which
 * the kernel creates with them (fresh per kernel, so kernels never share step state) and disposes
 * with the kernel, ending any span still open.
 *
 * One per kernel: its options are a service of the kernel. To send telemetry to several backends, give
 * one tracer provider several span processors.
 *
 * @example
 * const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter)] });
 * await kernel.use(otelPlugin({ tracerProvider: provider }));
 */
export function otelPlugin(options: OtelPluginOptions = {}): Plugin {
  return definePlugin({
    name: options.name ?? DEFAULT_PLUGIN_NAME,
    setup(ctx) {
      if (ctx.isBound(OtelPluginOptions)) {
        throw new Error('an OpenTelemetry plugin is already used in this kernel (use one, with a tracer provider that has several span processors)');
      }
      ctx.bind(OtelPluginOptions).toConstantValue(options);
      ctx.bindHooks(OtelStepHooks);
    },
  });
}
