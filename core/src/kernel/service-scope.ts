import type { BindingIdentifier, Container } from 'inversify';
import type { HookErrorHandler } from '../runtime/hooks/hook-guard.js';
import type { ApprovalCallback } from '../tooling/approval.js';
import type { NamedStepHooks } from '../runtime/hooks/step-hooks.js';
import { preDestroyMethods } from './class-metadata.js';
import type { Contribution } from './contribution.js';
import type { Disposal } from './disposal.js';
import { StepLeases } from './leases.js';
import type { ResolvedStep } from './step-runner.js';

/**
 * Private service identifier of the scope a container belongs to: the kernel's container and each
 * tenant's container bind it to their {@link ServiceScope}, so that a binding in the kernel's
 * container resolved through a tenant's container knows whose services to hand out.
 */
export const ScopeToken: unique symbol = Symbol('kosong.ServiceScope');

/** The plugins' hooks, hook-error sink and approval handler, as a scope's steps get them. */
export interface ScopeServices {
  readonly hooks: readonly NamedStepHooks[];
  readonly onHookError: HookErrorHandler;
  readonly onApproval: ApprovalCallback | undefined;
}

/** A class-bound contribution created in a scope. */
interface ScopeInstance {
  readonly value: object;
  /** The (transient) binding the kernel made for it in the scope's own container, if it made one. */
  readonly binding: BindingIdentifier | undefined;
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
  /** The plugins' hooks and sink for this scope (when it does not share the kernel scope's): valid for {@link revision}. */
  services: ScopeServices | undefined;
  /** The contributions to each extension point, as this scope has them (made on first use): valid for {@link revision}. */
  extensions: Map<symbol | string, readonly object[]> | undefined;
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
  /** The scope's own container, if it has one (the kernel's; a tenant's with bindings of its own). */
  abstract readonly container: Container | undefined;
  /**
   * Runs `resolve` with a container that resolves as this scope: what it injects is this scope's
   * (tenant id, toolset, runner, its bindings). Synchronous, like every resolution of the kernel.
   */
  abstract resolveIn<T>(resolve: (container: Container) => T): T;

  /** Forgets what steps resolved (the next step resolves anew). */
  invalidate(): void {
    this.steps.clear();
    this.services = undefined;
    this.extensions = undefined;
  }

  /**
   * Deactivates the class-bound services created here (those `which` selects), in reverse creation
   * order: each one's `@preDestroy()` methods are called and awaited (within the disposal's
   * deadline), once. A failure is reported by the disposal, naming the plugin, the service and the
   * tenant; the others still run.
   */
  async deactivate(disposal: Disposal, which: (contribution: Contribution) => boolean = () => true): Promise<void> {
    for (const [contribution, instance] of [...this.instances].reverse()) {
      if (!which(contribution)) continue;
      this.instances.delete(contribution);
      const site = { plugin: contribution.plugin, tenant: this.tenant, service: contribution.describe(), hook: '@preDestroy' };
      for (const method of preDestroyMethods(contribution.class!)) {
        await disposal.run(site, () => (instance.value as Record<string | symbol, () => unknown>)[method]!());
      }
      if (instance.binding) this.container?.unbind(instance.binding); // transient: nothing more to deactivate
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

  resolveIn<T>(resolve: (container: Container) => T): T {
    return resolve(this.container);
  }
}
