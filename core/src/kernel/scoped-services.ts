import type { BindingIdentifier, Container, ResolutionContext } from 'inversify';
import type { Contribution } from './contribution.js';
import { errorMessage, PluginError } from './errors.js';
import { circularContributionError, resolutionError } from './resolution-error.js';
import { ScopeToken, type ServiceScope } from './service-scope.js';

/**
 * What a tenant-only hooks or sink binding resolves to in the kernel's scope: an empty object,
 * which the kernel leaves out (and which, as hooks, would do nothing anyway).
 */
export const ABSENT_IN_KERNEL_SCOPE: object = Object.freeze({});

/**
 * Creates the plugins' contributions for each scope. The rules:
 *
 * - an object is the same everywhere; a factory is called once, on first use, for the whole kernel;
 * - a class is created once per scope that can change what it gets: in the kernel's scope; in every
 *   tenant with bindings of its own (so their dependencies are the tenant's); and in every tenant if it
 *   (or anything it injects) asked for something that differs between tenants — the tenant id, the
 *   scope's toolset, step runner or default provider. Otherwise tenants share the kernel's instance.
 * - a tenant-only class is created in every tenant, never in the kernel's scope.
 *
 * An instance is created by a container that resolves as its scope (a transient binding under the
 * contribution's private token, so its dependencies come from that scope) and kept by the scope:
 * `@postConstruct` runs once per scope, and the scope calls `@preDestroy` when it deactivates it. A
 * tenant without bindings of its own has no container: a shared guest container resolves as it
 * for the moment of the resolution. @internal
 */
export class ScopedServices {
  /** Whether something scope-dependent was resolved since the last reset (see {@link touch}). */
  #touched = false;
  /** Contributions being created, innermost last (to report cycles between contributions). */
  readonly #creating: { readonly contribution: Contribution; readonly scope: ServiceScope }[] = [];

  constructor(
    private readonly kernelScope: ServiceScope,
    /** Called with every instance created (the kernel names hooks by their plugin). */
    private readonly onCreated: (contribution: Contribution, instance: object) => void,
  ) {}

  /** Notes that what is being resolved now differs between tenants. Called by the scope-dependent bindings. */
  touch(): void {
    this.#touched = true;
  }

  /** The scope a resolution context belongs to. */
  scopeOf(context: ResolutionContext): ServiceScope {
    return context.get<ServiceScope>(ScopeToken);
  }

  /**
   * The contribution's value for a scope.
   *
   * @throws {PluginError} if it cannot be created there (naming the plugin and the service chain).
   */
  valueIn<T extends object>(contribution: Contribution<T>, scope: ServiceScope): T {
    const source = contribution.source;
    if (source.type === 'object') return source.value;
    if (source.type === 'factory') return (contribution.created ??= this.#callFactory(contribution, source.create));
    if (contribution.tenantOnly && scope.tenant === undefined) {
      throw new PluginError(contribution.plugin, 'resolution-failed', `${contribution.describe()} is bound for tenants only: a step without a tenant cannot use it`);
    }
    return this.#instanceIn(contribution, scope);
  }

  /** As {@link valueIn}, but a tenant-only contribution is {@link ABSENT_IN_KERNEL_SCOPE} in the kernel's scope. */
  valueOrAbsentIn<T extends object>(contribution: Contribution<T>, scope: ServiceScope): T {
    return contribution.tenantOnly && scope.tenant === undefined ? (ABSENT_IN_KERNEL_SCOPE as T) : this.valueIn(contribution, scope);
  }

  #callFactory<T extends object>(contribution: Contribution<T>, create: () => T): T {
    try {
      return create();
    } catch (error) {
      throw new PluginError(contribution.plugin, 'resolution-failed', `${contribution.describe()} failed: ${errorMessage(error)}`, { cause: error });
    }
  }

  #instanceIn<T extends object>(contribution: Contribution<T>, scope: ServiceScope): T {
    const home = this.#homeOf(contribution, scope);
    const known = home.instances.get(contribution);
    if (known) {
      if (contribution.scopeDependent) this.#touched = true;
      return known.value as T;
    }
    const cycleStart = this.#creating.findIndex((c) => c.contribution === contribution && c.scope === home);
    if (cycleStart >= 0) {
      throw circularContributionError(this.#creating.slice(cycleStart).map((c) => c.contribution), home.tenant);
    }
    const outer = this.#touched;
    this.#touched = false;
    this.#creating.push({ contribution, scope: home });
    let created: { value: T; binding: BindingIdentifier | undefined };
    try {
      created = home.resolveIn((container) => this.#create(contribution, container, home));
    } catch (error) {
      throw resolutionError(contribution, home.tenant, error);
    } finally {
      this.#creating.pop();
      if (home === this.kernelScope && this.#touched) contribution.scopeDependent = true;
      this.#touched ||= outer;
    }
    const { value, binding } = created;
    home.instances.set(contribution, { value, binding });
    this.onCreated(contribution, value);
    return value;
  }

  /**
   * Creates a class-bound contribution with `container`, binding its class under its token there
   * first (transient: the scope keeps the instance) unless the container already has it — the
   * kernel's from the plugin's module, the shared guest container of tenants from an earlier tenant.
   * Returns the binding made in the scope's own container, to remove with the instance.
   */
  #create<T extends object>(contribution: Contribution<T>, container: Container, home: ServiceScope): { value: T; binding: BindingIdentifier | undefined } {
    const added = container.isCurrentBound(contribution.token) ? undefined : container.bind(contribution.token).to(contribution.class!).getIdentifier();
    try {
      return { value: container.get<T>(contribution.token), binding: container === home.container ? added : undefined };
    } catch (error) {
      if (added) container.unbind(added); // transient: nothing to deactivate
      throw error;
    }
  }

  /** Where a class-bound contribution asked for in `scope` is created (see the class comment). */
  #homeOf(contribution: Contribution, scope: ServiceScope): ServiceScope {
    if (scope.ownBindings || contribution.tenantOnly) return scope;
    // Whether it is scope-dependent is learnt by creating it in the kernel's scope first.
    if (!this.kernelScope.instances.has(contribution)) this.#instanceIn(contribution, this.kernelScope);
    return contribution.scopeDependent ? scope : this.kernelScope;
  }
}
