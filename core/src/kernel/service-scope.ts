import type { BindingIdentifier, Container } from 'inversify';
import { preDestroyMethods } from './class-metadata.js';
import type { Contribution } from './contribution.js';
import { errorMessage, PluginError } from './errors.js';
import { StepLeases } from './leases.js';
import type { ResolvedStep } from './step-runner.js';

/**
 * Private service identifier of the scope a container belongs to: the kernel's container and each
 * tenant's container bind it to their {@link ServiceScope}, so that a binding in the kernel's
 * container resolved through a tenant's container knows whose services to hand out.
 */
export const ScopeToken: unique symbol = Symbol('kosong.ServiceScope');

/** A class-bound contribution created in a scope. */
interface ScopeInstance {
  readonly value: object;
  /** Its (transient) binding in the scope's container; the scope keeps the one instance. */
  readonly binding: BindingIdentifier;
}

/**
 * Where steps run and services live: the kernel's scope (steps without a tenant), or one tenant's.
 * A scope keeps the class-bound services created in it (in creation order, so it can deactivate them
 * in reverse) and what its steps resolved (until the kernel's plugins change). @internal
 */
export abstract class ServiceScope {
  /** Class-bound contributions created in this scope, in creation order. */
  readonly instances = new Map<Contribution, ScopeInstance>();
  /** What a step of this scope resolves, by provider name (`''` for none): valid for {@link revision}. */
  readonly steps = new Map<string, ResolvedStep>();
  /** The kernel revision {@link steps} was resolved in. */
  revision = -1;
  /** Steps running in this scope (removal and disposal wait for them). */
  readonly leases = new StepLeases();

  /** The tenant, or `undefined` for the kernel's scope. */
  abstract readonly tenant: string | undefined;
  /**
   * Whether the scope has bindings of its own (the kernel's scope has all of the plugins'), so that
   * every class-bound service resolved for it is created in it.
   */
  abstract readonly ownBindings: boolean;
  /** The scope's container, if it has one yet. */
  abstract readonly container: Container | undefined;
  /** The scope's container, created if it has none yet. */
  abstract ensureContainer(): Container;

  /** Forgets what steps resolved (the next step resolves anew). */
  invalidate(): void {
    this.steps.clear();
  }

  /**
   * Deactivates the class-bound services created here (those `which` selects), in reverse creation
   * order: each one's `@preDestroy()` methods are called and awaited, once. A failure is added to
   * `errors` as a {@link PluginError} naming the plugin; the others still run.
   */
  async deactivate(errors: unknown[], which: (contribution: Contribution) => boolean = () => true): Promise<void> {
    const container = this.container;
    if (!container) return;
    for (const [contribution, instance] of [...this.instances].reverse()) {
      if (!which(contribution)) continue;
      this.instances.delete(contribution);
      for (const method of preDestroyMethods(contribution.class!)) {
        try {
          await (instance.value as Record<string | symbol, () => unknown>)[method]!();
        } catch (error) {
          const where = this.tenant === undefined ? '' : ` of tenant "${this.tenant}"`;
          errors.push(
            new PluginError(contribution.plugin, 'dispose-failed', `${contribution.describe()}${where} failed to deactivate: ${errorMessage(error)}`, { cause: error }),
          );
        }
      }
      container.unbind(instance.binding); // transient: nothing more to deactivate
    }
    this.invalidate();
  }
}

/** The kernel's own scope: its container holds every plugin's bindings. @internal */
export class KernelScope extends ServiceScope {
  readonly tenant = undefined;
  readonly ownBindings = true;

  constructor(readonly container: Container) {
    super();
  }

  ensureContainer(): Container {
    return this.container;
  }
}
