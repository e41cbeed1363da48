import { writeHookErrorToStderr, type HookErrorReport } from '../runtime/hook-guard.js';

/**
 * Receives every hook failure of steps run by the kernel (plugin name, hook name, step id, tenant,
 * the error). Bind one to replace the default, which writes one line to stderr; the last one bound
 * wins, and a tenant's own sink (bound in its container) wins for that tenant.
 */
export interface HookErrorSink {
  report(report: HookErrorReport): void;
}

/** Service identifier of {@link HookErrorSink}. */
export const HookErrorSink: unique symbol = Symbol.for('kosong.HookErrorSink');

/** The default sink: one line on stderr per failure. */
export const stderrHookErrorSink: HookErrorSink = { report: writeHookErrorToStderr };
