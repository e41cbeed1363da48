import { definePlugin, type Plugin } from '@kosong/core';
import type { LoggingOptions } from './logging-options.js';
import { StepLogHooks } from './step-log-hooks.js';
import { StepLogger } from './step-logger.js';

/**
 * The logging plugin (named `logging`): binds a {@link StepLogger} (under its class, so other
 * services can inject it), its hooks as {@link StepLogHooks} to every step of the kernel, and makes
 * it the kernel's hook-error sink (the last sink bound wins, and a tenant's own sink wins for that
 * tenant). When the kernel is disposed, the logger's deactivation flushes it (every line is on disk
 * for a file destination once `dispose()` resolves) and closes a log file opened for `options`.
 *
 * Pass a {@link StepLogger} instead of options to keep a handle on it, e.g. for
 * `kernel.agent({ onHookError: logs.hookErrorSink.report })`.
 *
 * @example
 * await kernel.use(loggingPlugin({ level: 'debug', secrets: [apiKey] }));
 *
 * @throws {TypeError} for conflicting options or a secret that is not a string.
 */
export function loggingPlugin(options: LoggingOptions | StepLogger = {}): Plugin {
  const owned = !(options instanceof StepLogger);
  // Built here, not by the container: bad options fail this call, at once.
  const logs = options instanceof StepLogger ? options : new StepLogger(options);
  return definePlugin({
    name: 'logging',
    setup: (ctx) => {
      ctx
        .bind(StepLogger)
        .toConstantValue(logs)
        .onDeactivation(() => (owned ? logs.close() : logs.flush()));
      ctx.bindHooks(StepLogHooks);
      ctx.bindHookErrorSink(logs.hookErrorSink);
    },
  });
}
