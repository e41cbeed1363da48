import { Container, type ContainerModule } from 'inversify';
import { ChatProvider } from '../provider/chat-provider.js';
import { asNamedHooks, StepHooks, type NamedStepHooks } from '../runtime/step-hooks.js';
import { Toolset } from '../tooling/toolset.js';
import { KernelError, UnknownTenantError } from './errors.js';
import { StepLeases } from './leases.js';

/** How a tenant differs from the global setup. Everything is optional. */
export interface TenantDefinition {
  /** The tenant's own toolset; without one, its steps use the global toolset. */
  readonly toolset?: Toolset;
  /** A registered provider's name, or a provider instance of the tenant's own. */
  readonly provider?: string | ChatProvider;
  /** Hooks for this tenant's steps only, after the global ones. */
  readonly hooks?: readonly (StepHooks | NamedStepHooks)[];
  /** Extra bindings for the tenant's container (synchronous modules: they are loaded with `load`). */
  readonly modules?: readonly ContainerModule[];
}

/** One tenant: a child container, its own hooks and toolset choice, and the steps running for it. @internal */
export class TenantScope {
  readonly hooks: readonly NamedStepHooks[];
  readonly providerName: string | undefined;
  readonly leases = new StepLeases();
  /** Set by `setToolset`: used instead of the container's toolset from the next step on. */
  toolsetOverride: Toolset | undefined;

  constructor(
    readonly id: string,
    readonly container: Container,
    definition: TenantDefinition,
  ) {
    this.hooks = (definition.hooks ?? []).map((hooks, i) => asNamedHooks(hooks, `tenant ${id} hooks #${i + 1}`));
    this.providerName = typeof definition.provider === 'string' ? definition.provider : undefined;
  }

  /** The toolset a step starting now uses, if the tenant has one of its own. */
  get toolset(): Toolset | undefined {
    if (this.toolsetOverride) return this.toolsetOverride;
    return this.container.isCurrentBound(Toolset) ? this.container.get<Toolset>(Toolset) : undefined;
  }
}

/**
 * The tenants of a kernel. Each tenant is a child container of the kernel's container; its toolset,
 * provider and extra bindings live there, never in the root, so nothing of one tenant can be handed
 * to another. A running step keeps the toolset it started with; changes apply to the next step.
 */
export class Tenants {
  private readonly scopes = new Map<string, TenantScope>();
  /** Removals waiting for running steps, by tenant id (a tenant may be defined again meanwhile). */
  private readonly removals = new Map<string, Promise<void>>();

  /** @internal Created by the kernel. */
  constructor(
    private readonly root: Container,
    private readonly checkProvider: (name: string) => void,
    private readonly checkOpen: () => void,
  ) {}

  /**
   * Defines a tenant. An id whose removal is still pending may be defined again: the new tenant is
   * a fresh container, the old one is disposed when its steps finish.
   *
   * @throws {KernelError} if the id is taken, or a module binds `StepHooks` (give tenant hooks with
   * `hooks`); {@link UnknownProviderError} for an unknown provider name.
   */
  define(id: string, definition: TenantDefinition = {}): void {
    this.checkOpen();
    if (typeof id !== 'string' || id === '') throw new KernelError('A tenant id must be a non-empty string');
    if (this.scopes.has(id)) throw new KernelError(`Tenant "${id}" is already defined; remove it first, or use setToolset`);
    if (typeof definition.provider === 'string') this.checkProvider(definition.provider);
    const container = new Container({ parent: this.root });
    if (definition.toolset) container.bind(Toolset).toConstantValue(definition.toolset);
    if (definition.provider !== undefined && typeof definition.provider !== 'string') {
      container.bind(ChatProvider).toConstantValue(definition.provider);
    }
    if (definition.modules?.length) container.load(...definition.modules);
    if (container.isCurrentBound(StepHooks)) {
      throw new KernelError(`Tenant "${id}": bind its hooks with define(id, { hooks }), not in a module`);
    }
    this.scopes.set(id, new TenantScope(id, container, definition));
  }

  /**
   * Gives a tenant a new toolset. Steps already running keep theirs; the next step uses this one.
   * A toolset bound by the tenant's modules stays bound (a running step may still use it) and is
   * disposed with the tenant.
   */
  setToolset(id: string, toolset: Toolset): void {
    this.scope(id).toolsetOverride = toolset;
  }

  /** Whether a tenant is defined. */
  has(id: string): boolean {
    return this.scopes.has(id);
  }

  /** The ids of the defined tenants, in definition order. */
  list(): string[] {
    return [...this.scopes.keys()];
  }

  /**
   * Removes a tenant: new steps for it fail at once, running ones finish (through their cleanup),
   * then its container is disposed (deactivation handlers run). Calling it again while the removal
   * is pending returns the same promise.
   */
  remove(id: string): Promise<void> {
    const scope = this.scopes.get(id);
    if (!scope) {
      return this.removals.get(id) ?? Promise.reject(new UnknownTenantError(id, this.list()));
    }
    this.scopes.delete(id);
    const removal: Promise<void> = scope.leases
      .idle()
      .then(() => scope.container.unbindAllAsync())
      .finally(() => {
        if (this.removals.get(id) === removal) this.removals.delete(id);
      });
    this.removals.set(id, removal);
    return removal;
  }

  /** @internal The scope of a tenant that can run steps. */
  scope(id: string): TenantScope {
    const scope = this.scopes.get(id);
    if (!scope) throw new UnknownTenantError(id, this.list());
    return scope;
  }

  /** @internal Removes every tenant and waits for every pending removal (kernel disposal). */
  async removeAll(): Promise<void> {
    const pending = [...this.list().map((id) => this.remove(id)), ...this.removals.values()];
    await Promise.all(pending);
  }
}
