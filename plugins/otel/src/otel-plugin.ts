import { definePlugin, type Plugin } from '@kosong/core';
import { DEFAULT_PLUGIN_NAME, type OtelPluginOptions } from './options.js';
import { OtelStepHooks } from './otel-step-hooks.js';

/**
 * A kernel plugin that traces and measures every step with OpenTelemetry, following the GenAI semantic
 * conventions (see `GEN_AI_CONVENTIONS_VERSION`). It is built only on the public `StepHooks` API: at
 * setup it binds one {@link OtelStepHooks} (fresh per kernel, so kernels never share step state), and
 * when the kernel is disposed it ends any span still open.
 *
 * @example
 * const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter)] });
 * await kernel.use(otelPlugin({ tracerProvider: provider }));
 */
export function otelPlugin(options: OtelPluginOptions = {}): Plugin {
  return definePlugin({
    name: options.name ?? DEFAULT_PLUGIN_NAME,
    setup(ctx) {
      const hooks = new OtelStepHooks(options);
      ctx.bindHooks(hooks);
      ctx.onDispose(() => hooks.endAll());
    },
  });
}
