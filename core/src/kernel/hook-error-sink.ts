import { writeHookErrorToStderr, type HookErrorReport } from '../runtime/hooks/hook-guard.js';

/**
 * Receives every hook failure of steps run by the kernel (plugin name, hook name, step id, tenant,
 * the error), and every failure to take a service down when a tenant is removed or the kernel
 * disposed (a {@link DisposalErrorReport}: `phase` is `'dispose'`). Bind one to replace the
 * default, which writes one line to stderr; the last one bound wins, and a tenant's own sink (bound
 * in its container) wins for that tenant. `report` must not throw (if it does, the failure goes to
 * stderr instead).
 */
export interface HookErrorSink {
  report(report: HookErrorReport): void;
}

/** Service identifier of {@link HookErrorSink}. */
export const HookErrorSink: unique symbol = Symbol.for('kosong.HookErrorSink');

/**
 * A service that failed to deactivate when its tenant was removed or the kernel disposed: its
 * `@preDestroy`, a deactivation handler or an `onDispose` callback threw, rejected, or did not
 * settle within the kernel's `deactivationTimeoutMs` (`kind: 'timeout'`; it is then no longer
 * awaited). `tenants.remove` and `kernel.dispose` report each such failure once, go on with the
 * rest, and resolve.
 */
export interface DisposalErrorReport extends HookErrorReport {
  /** Tells it from a step's hook failure. */
  readonly phase: 'dispose';
  /** The plugin that bound the service, or `tenant <id> module` for what a tenant's modules bound. */
  readonly plugin: string;
  /** The service: a helper-bound one as `hooks UsageMeter`, a raw binding by its identifier (`Symbol(Db)`), or `onDispose #1`. */
  readonly service: string;
  /** What failed: `@preDestroy`, `onDeactivation` (a module's handler), `deactivation` (a raw binding's), `onDispose`, `unload`. */
  readonly hook: string;
  /** `'-'`: no step. */
  readonly stepId: string;
  /** A `PluginError` (`dispose-failed`; a `KernelError` for a tenant module's binding) naming plugin, service and tenant, with the failure as its `cause`. */
  readonly error: Error;
}

/** Whether a report sent to a {@link HookErrorSink} is a {@link DisposalErrorReport}. */
export function isDisposalErrorReport(report: HookErrorReport): report is DisposalErrorReport {
  return (report as Partial<DisposalErrorReport>).phase === 'dispose';
}

/** One stderr line for a failed deactivation. @internal */
export function writeDisposalErrorToStderr(report: DisposalErrorReport): void {
  const tenant = report.tenant === undefined ? '' : ` (tenant ${report.tenant})`;
  const cause: unknown = report.error.cause ?? report.error;
  const reason = cause instanceof Error ? cause.message : String(cause);
  process.stderr.write(`[kosong] dispose: plugin ${report.plugin}: ${report.service} ${report.hook} ${report.kind}${tenant}: ${reason}\n`);
}

/** The default sink: one line on stderr per failure. */
export const stderrHookErrorSink: HookErrorSink = {
  report: (report) => (isDisposalErrorReport(report) ? writeDisposalErrorToStderr(report) : writeHookErrorToStderr(report)),
};
