import type { StepOptions } from '../runtime/step.js';

/** Options of a {@link Kernel}: defaults for every step it runs, and how long disposal waits. Services may inject them. */
export interface KernelOptions extends Pick<StepOptions, 'dispatch' | 'hookTimeoutMs' | 'cleanupTimeoutMs'> {
  /**
   * How long each deactivation may take when a tenant is removed or the kernel disposed (a
   * `@preDestroy`, a deactivation handler, an `onDispose` callback), in milliseconds; one still
   * running then is reported to the `HookErrorSink` as a timeout and no longer awaited. Default 5000.
   */
  readonly deactivationTimeoutMs?: number;
}

/** Service identifier of the kernel's {@link KernelOptions} (as given to its constructor). */
export const KernelOptions: unique symbol = Symbol.for('kosong.KernelOptions');
