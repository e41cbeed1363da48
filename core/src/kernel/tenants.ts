import { Container, type ContainerModule } from 'inversify';
import { ChatProvider } from '../provider/chat-provider.js';
import { asNamedHooks, type NamedStepHooks, type StepHooks } from '../runtime/step-hooks.js';
import { Toolset } from '../tooling/toolset.js';
import { KernelError, UnknownTenantError } from './errors.js';

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

/** One tenant: a child container and the steps running for it. @internal */
export class TenantScope {
  readonly hooks: readonly NamedStepHooks[];
  readonly providerName: string | undefined;
  private active = 0;
  private idleWaiters: (() => void)[] = [];
  removing = false;
  /** Set once `remove` started; a second `remove` returns it. */
  removal: Promise<void> | undefined;

  constructor(
    readonly id: string,
    readonly container: Container,
    definition: TenantDefinition,
  ) {
    this.hooks = (definition.hooks ?? []).map((hooks, i) => asNamedHooks(hooks, `tenant ${id} hooks #${i + 1}`));
    this.providerName = typeof definition.provider === 'string' ? definition.provider : undefined;
  }

  /** Marks one step as running; the returned function (idempotent) marks it done. */
  lease(): () => void {
    this.active++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.active === 0) for (const wake of this.idleWaiters.splice(0)) wake();
    };
  }

  /** Resolves when no step is running for the tenant. */
  idle(): Promise<void> {
    return this.active === 0 ? Promise.resolve() : new Promise((resolve) => this.idleWaiters.push(resolve));
  }
}

/**
 * The tenants of a kernel. Each tenant is a child container of the kernel's container; its toolset,
 * provider and extra bindings live there, never in the root, so nothing of one tenant can be handed
 * to another. A running step keeps the toolset it started with; changes apply to the next step.
 */
export class Tenants {
  private readonly scopes = new Map<string, TenantScope>();

  /** @internal Created by the kernel. */
  constructor(
    private readonly root: Container,
    private readonly checkProvider: (name: string) => void,
    private readonly checkOpen: () => void,
  ) {}

  /**
   * Defines a tenant.
   *
   * @throws {KernelError} if the id is taken; {@link UnknownProviderError} for an unknown provider name.
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
    this.scopes.set(id, new TenantScope(id, container, definition));
  }

  /** Gives a tenant a new toolset. Steps already running keep theirs; the next step uses this one. */
  setToolset(id: string, toolset: Toolset): void {
    const scope = this.scope(id);
    if (scope.container.isCurrentBound(Toolset)) scope.container.rebind(Toolset).toConstantValue(toolset);
    else scope.container.bind(Toolset).toConstantValue(toolset);
  }

  /** Whether a tenant is defined (and not being removed). */
  has(id: string): boolean {
    const scope = this.scopes.get(id);
    return scope !== undefined && !scope.removing;
  }

  /** The ids of the defined tenants, in definition order. */
  list(): string[] {
    return [...this.scopes.values()].filter((s) => !s.removing).map((s) => s.id);
  }

  /**
   * Removes a tenant: new steps for it fail at once, running ones finish (through their cleanup),
   * then its container is disposed (deactivation handlers run).
   */
  remove(id: string): Promise<void> {
    const existing = this.scopes.get(id);
    if (existing?.removal) return existing.removal;
    const scope = this.scope(id);
    scope.removing = true;
    scope.removal = (async () => {
      await scope.idle();
      this.scopes.delete(id);
      await scope.container.unbindAllAsync();
    })();
    return scope.removal;
  }

  /** @internal The scope of a tenant that can run steps. */
  scope(id: string): TenantScope {
    const scope = this.scopes.get(id);
    if (!scope || scope.removing) throw new UnknownTenantError(id, this.list());
    return scope;
  }

  /** @internal Removes every tenant (kernel disposal). */
  async removeAll(): Promise<void> {
    await Promise.all(this.list().map((id) => this.remove(id)));
  }
}
