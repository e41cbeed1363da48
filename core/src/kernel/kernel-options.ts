import type { StepOptions } from '../runtime/step.js';

/** Options of a {@link Kernel}: defaults for every step it runs. Services may inject them. */
export type KernelOptions = Pick<StepOptions, 'dispatch' | 'hookTimeoutMs' | 'cleanupTimeoutMs'>;

/** Service identifier of the kernel's {@link KernelOptions} (as given to its constructor). */
export const KernelOptions: unique symbol = Symbol.for('kosong.KernelOptions');
