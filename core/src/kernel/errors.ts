/**
 * Errors of the kernel. Each names what went wrong (the plugin, the provider, the tenant) and, where
 * a name was not found, lists what exists. Each has a static `isInstance(e)` that works across
 * duplicated package copies.
 *
 * @module
 */
import { errorMarker, hasErrorMarker, markError } from '../error-marker.js';

const KERNEL_ERROR = errorMarker('KernelError');
const PLUGIN_ERROR = errorMarker('PluginError');
const UNKNOWN_PROVIDER_ERROR = errorMarker('UnknownProviderError');
const UNKNOWN_TENANT_ERROR = errorMarker('UnknownTenantError');

/** Base of every kernel error. */
export class KernelError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    markError(this, KERNEL_ERROR);
  }

  /** Whether `error` is a {@link KernelError}. */
  static isInstance(error: unknown): error is KernelError {
    return hasErrorMarker(error, KERNEL_ERROR);
  }
}

/**
 * Why a plugin could not be used (or, for `dispose-failed`, torn down):
 * - `invalid`, `duplicate`, `missing-requirement`, `requirement-cycle`, `setup-failed`, `conflict`: the plugin itself;
 * - `not-injectable`: it bound a class without `@injectable()`;
 * - `unbound-dependency`, `circular-dependency`, `resolution-failed`: one of its class-bound services
 *   cannot be created (a dependency is not bound, the dependencies form a cycle, a constructor or
 *   `@postConstruct` threw); the message names the service chain;
 * - `scope-mismatch`: a class declared (or, undeclared, found to be) shared depends on something
 *   that differs per tenant; the message names both and the chain between them;
 * - `dispose-failed`: an `onDispose` callback, a `@preDestroy` or a deactivation handler failed or
 *   did not settle within the kernel's `deactivationTimeoutMs` (the `error` of a `DisposalErrorReport`
 *   sent to the `HookErrorSink`: never thrown by `tenants.remove` or `kernel.dispose`).
 */
export type PluginFailure =
  | 'invalid'
  | 'duplicate'
  | 'missing-requirement'
  | 'requirement-cycle'
  | 'setup-failed'
  | 'conflict'
  | 'not-injectable'
  | 'unbound-dependency'
  | 'circular-dependency'
  | 'resolution-failed'
  | 'scope-mismatch'
  | 'dispose-failed';

/**
 * A plugin could not be used; `kernel.use` left the kernel as it was before the call. Also thrown by
 * a step or a tenant definition when one of the plugin's services cannot be resolved for a tenant.
 */
export class PluginError extends KernelError {
  constructor(
    /** The plugin at fault. */
    readonly plugin: string,
    readonly reason: PluginFailure,
    message: string,
    options?: ErrorOptions,
  ) {
    super(`Plugin "${plugin}": ${message}`, options);
    markError(this, PLUGIN_ERROR);
  }

  /** Whether `error` is a {@link PluginError}. */
  static override isInstance(error: unknown): error is PluginError {
    return hasErrorMarker(error, PLUGIN_ERROR);
  }
}

/** No chat provider is registered under the name asked for (or none at all). */
export class UnknownProviderError extends KernelError {
  constructor(
    readonly provider: string | undefined,
    /** The names that are registered. */
    readonly available: readonly string[],
  ) {
    const known = available.length > 0 ? `registered: ${available.map((n) => `"${n}"`).join(', ')}` : 'no provider is registered';
    super(provider === undefined ? `No chat provider to use (${known})` : `Unknown chat provider "${provider}" (${known})`);
    markError(this, UNKNOWN_PROVIDER_ERROR);
  }

  /** Whether `error` is an {@link UnknownProviderError}. */
  static override isInstance(error: unknown): error is UnknownProviderError {
    return hasErrorMarker(error, UNKNOWN_PROVIDER_ERROR);
  }
}

/** No tenant is defined under the id asked for. */
export class UnknownTenantError extends KernelError {
  constructor(
    readonly tenant: string,
    /** The tenants that are defined. */
    readonly available: readonly string[],
  ) {
    const known = available.length > 0 ? `defined: ${available.map((n) => `"${n}"`).join(', ')}` : 'no tenant is defined';
    super(`Unknown tenant "${tenant}" (${known})`);
    markError(this, UNKNOWN_TENANT_ERROR);
  }

  /** Whether `error` is an {@link UnknownTenantError}. */
  static override isInstance(error: unknown): error is UnknownTenantError {
    return hasErrorMarker(error, UNKNOWN_TENANT_ERROR);
  }
}

/** The message of an error, or the value as a string. @internal */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
