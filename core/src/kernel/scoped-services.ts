import type { BindingIdentifier, Container, ResolutionContext } from 'inversify';
import type { Contribution, Lifetime } from './contribution.js';
import { errorMessage, PluginError } from './errors.js';
import { isPerTenant, scopeMismatchError } from './lifetimes.js';
import { circularContributionError, resolutionError } from './resolution-error.js';
import { ScopeToken, type ServiceScope } from './service-scope.js';

/**
 * What a tenant-only hooks or sink binding resolves to in the kernel's scope: an empty object,
 * which the kernel leaves out (and which, as hooks, would do nothing anyway).
 */
export const ABSENT_IN_KERNEL_SCOPE: object = Object.freeze({});

/**
 * Creates the plugins' contributions for each scope, where their {@link Lifetime} — declared when
 * they were bound, or decided when their plugin was used — says:
 *
 * - an object is the same everywhere; a factory is called once, on first use, for the whole kernel;
 * - a `shared` class is created once, in the kernel's scope, and handed to every tenant;
 * - a `tenant` class once per scope: the kernel's, and each tenant's;
 * - a `tenant-only` class once per tenant, never in the kernel's scope;
 * - a `container` class once in the kernel's scope (which tenants without bindings of their own
 *   share) and once in each tenant with bindings of its own.
 *
 * Nothing is learnt while resolving: a class created once for several tenants (`shared`,
 * `container`) that depends on something created per tenant, or resolves what differs per tenant
 * (the kernel's bindings of `TenantId`, `StepRunner`, `Toolset` and the default `ChatProvider` ask
 * {@link perTenant}), fails with a `scope-mismatch` {@link PluginError} naming both.
 *
 * An instance is created by a container that resolves as its scope (a transient binding under the
 * contribution's private token, so its dependencies come from that scope) and kept by the scope:
 * `@postConstruct` runs once per scope, and the scope calls `@preDestroy` when it deactivates it. A
 * tenant without bindings of its own has no container: a shared guest container resolves as it
 * for the moment of the resolution. @internal
 */
export class ScopedServices {
  /** Contributions being created, innermost last (to report cycles, and what a shared one depends on). */
  readonly #creating: { readonly contribution: Contribution; readonly scope: ServiceScope }[] = [];

  constructor(
    private readonly kernelScope: ServiceScope,
    /** Called with every instance created (the kernel names hooks by their plugin). */
    private readonly onCreated: (contribution: Contribution, instance: object) => void,
    /** A contribution's lifetime (an undeclared class's is decided on first ask). */
    private readonly lifetimeOf: (contribution: Contribution) => Lifetime,
  ) {}

  /** The scope a resolution context belongs to. */
  scopeOf(context: ResolutionContext): ServiceScope {
    return context.get<ServiceScope>(ScopeToken);
  }

  /**
   * Called when something that differs per tenant (`service`, as errors name it) is resolved:
   * refused to a contribution being created once for several tenants.
   *
   * @throws {PluginError} `scope-mismatch`, naming the contribution and `service`.
   */
  perTenant(service: string): void {
    const creating = this.#creating.at(-1)?.contribution;
    if (creating && !isPerTenant(this.lifetimeOf(creating))) throw scopeMismatchError(creating, { chain: [service], why: 'differs per tenant' }, true);
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
    const lifetime = this.lifetimeOf(contribution);
    if (isPerTenant(lifetime)) {
      const requester = this.#creating.at(-1)?.contribution;
      if (requester && !isPerTenant(this.lifetimeOf(requester))) {
        throw scopeMismatchError(requester, { chain: [contribution.describe()], why: `is created per tenant (plugin "${contribution.plugin}")` }, true);
      }
    }
    if (lifetime === 'tenant-only' && scope.tenant === undefined) {
      throw new PluginError(contribution.plugin, 'resolution-failed', `${contribution.describe()} is bound for tenants only: a step without a tenant cannot use it`);
    }
    return this.#instanceIn(contribution, this.#homeOf(lifetime, scope));
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

  #instanceIn<T extends object>(contribution: Contribution<T>, home: ServiceScope): T {
    const known = home.instances.get(contribution);
    if (known) return known.value as T;
    const cycleStart = this.#creating.findIndex((c) => c.contribution === contribution && c.scope === home);
    if (cycleStart >= 0) {
      throw circularContributionError(this.#creating.slice(cycleStart).map((c) => c.contribution), home.tenant);
    }
    this.#creating.push({ contribution, scope: home });
    let created: { value: T; binding: BindingIdentifier | undefined };
    try {
      created = home.resolveIn((container) => this.#create(contribution, container, home));
    } catch (error) {
      throw resolutionError(contribution, home.tenant, error);
    } finally {
      this.#creating.pop();
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
  #homeOf(lifetime: Lifetime, scope: ServiceScope): ServiceScope {
    switch (lifetime) {
      case 'shared':
        return this.kernelScope;
      case 'container':
        return scope.ownBindings ? scope : this.kernelScope;
      default:
        return scope;
    }
  }
}
