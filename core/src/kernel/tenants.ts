import type { ContainerModuleLoadOptions } from 'inversify';
import { Container, ContainerModule } from './inversify.js';
import { ChatProvider } from '../provider/chat-provider.js';
import { asNamedHooks, StepHooks, type NamedStepHooks } from '../runtime/step-hooks.js';
import { Toolset } from '../tooling/toolset.js';
import { recordBindings, unbindRecorded, type RecordedBinding } from './binding-recorder.js';
import { errorMessage, KernelError, UnknownTenantError } from './errors.js';
import { ScopeToken, ServiceScope } from './service-scope.js';
import { TenantId } from './tenant-id.js';

/** What a tenant's {@link TenantDefinition.module} gets: the inversify module API and the tenant's id. */
export interface TenantModuleContext extends ContainerModuleLoadOptions {
  readonly tenant: string;
}

/** How a tenant differs from the global setup. Everything is optional. */
export interface TenantDefinition {
  /** The tenant's own toolset; without one, its steps use the global toolset. */
  readonly toolset?: Toolset;
  /** A registered provider's name, or a provider instance of the tenant's own. */
  readonly provider?: string | ChatProvider;
  /** Hooks for this tenant's steps only, after the global ones. */
  readonly hooks?: readonly (StepHooks | NamedStepHooks)[];
  /**
   * The tenant's own bindings (its API key, its settings), run once when the tenant is defined:
   * `module: (ctx) => ctx.bind(ApiKey).toConstantValue(key)`. The plugins' class-bound services
   * resolved for this tenant are created in its scope, with these injected. Synchronous.
   */
  readonly module?: (context: TenantModuleContext) => void;
  /** More bindings, as inversify modules (synchronous: they are loaded with `load`). */
  readonly modules?: readonly ContainerModule[];
}

/** What tenants need of their kernel. @internal */
export interface TenantHost {
  /** The kernel's container: the parent of every tenant's. */
  readonly container: Container;
  checkProvider(name: string): void;
  checkOpen(): void;
  /** The toolset a step of `scope` uses (what `Toolset` resolves to in the tenant's container). */
  toolsetFor(scope: TenantScope): Toolset;
  /**
   * Creates the plugins' class-bound services that a new tenant does not share with the kernel's
   * scope (the eager check): all of them if it has bindings of its own, else the tenant-only ones.
   */
  checkScope(scope: TenantScope): void;
}

/**
 * One tenant: its hooks, toolset and provider choice, the steps running for it, the services
 * created for it, and — if it has bindings of its own — a child container of the kernel's holding
 * them. A tenant without bindings has no container: a shared guest container resolves as it, for the
 * moment of a resolution. @internal
 */
export class TenantScope extends ServiceScope {
  readonly hooks: readonly NamedStepHooks[];
  readonly providerName: string | undefined;
  /** The provider instance of the tenant's own, if it has one. */
  readonly ownProvider: ChatProvider | undefined;
  /** The toolset given in the definition, if any. */
  readonly ownToolset: Toolset | undefined;
  readonly ownBindings: boolean;
  /** Set by `setToolset`: used instead of the tenant's other toolsets from the next step on. */
  toolsetOverride: Toolset | undefined;
  /** Whether the tenant's modules bound a `Toolset` / an unnamed `ChatProvider` of their own. */
  moduleToolset = false;
  moduleProvider = false;
  #container: Container | undefined;
  /** What its `module` bound, in order. */
  readonly #moduleBindings: RecordedBinding[] = [];

  constructor(
    readonly tenant: string,
    private readonly definition: TenantDefinition,
    private readonly host: TenantHost,
    /** Runs a resolution in the shared guest container, set to resolve as `scope`. */
    private readonly asGuest: <T>(scope: TenantScope, resolve: (container: Container) => T) => T,
  ) {
    super();
    this.hooks = (definition.hooks ?? []).map((hooks, i) => asNamedHooks(hooks, `tenant ${tenant} hooks #${i + 1}`));
    this.providerName = typeof definition.provider === 'string' ? definition.provider : undefined;
    this.ownProvider = typeof definition.provider === 'object' ? definition.provider : undefined;
    this.ownToolset = definition.toolset;
    this.ownBindings = definition.module !== undefined || (definition.modules?.length ?? 0) > 0;
  }

  get container(): Container | undefined {
    return this.#container;
  }

  resolveIn<T>(resolve: (container: Container) => T): T {
    return this.#container ? resolve(this.#container) : this.asGuest(this, resolve);
  }

  /** Creates the tenant's own container with its bindings (for a tenant that has some). */
  createContainer(): void {
    this.#container ??= this.#newContainer();
  }

  #newContainer(): Container {
    const container = new Container({ parent: this.host.container });
    container.bind(ScopeToken).toConstantValue(this);
    container.bind(TenantId).toConstantValue(this.tenant);
    const { module, modules = [] } = this.definition;
    const tenant = this.tenant;
    try {
      if (module) {
        container.load(
          new ContainerModule((options) => {
            const returned: unknown = module({ ...recordBindings(options, (b) => this.#moduleBindings.push(b)), tenant });
            // Any other value is ignored: an arrow that returns its binding would make `load` think the module is async.
            if (isThenable(returned)) {
              returned.then(undefined, () => undefined); // refused below; its outcome must not go unhandled
              throw new Error('it returned a promise: a tenant module must bind synchronously (do async work before define)');
            }
          }),
        );
      }
      if (modules.length > 0) container.load(...modules);
    } catch (error) {
      throw new KernelError(`Tenant "${tenant}": its module failed: ${errorMessage(error)}`, { cause: error });
    }
    if (container.isCurrentBound(StepHooks)) {
      throw new KernelError(`Tenant "${this.tenant}": bind its hooks with define(id, { hooks }), not in a module`);
    }
    this.moduleToolset = container.isCurrentBound(Toolset);
    this.moduleProvider = container.isCurrentBound(ChatProvider);
    if (!this.moduleToolset) container.bind(Toolset).toDynamicValue(() => this.host.toolsetFor(this));
    return container;
  }

  /**
   * Disposes the tenant's container: the services created for it (reverse creation order), what its
   * `module` bound (reverse order), then its `modules`. Each step awaited; failures are added to
   * `errors`.
   */
  async dispose(errors: unknown[]): Promise<void> {
    await this.deactivate(errors);
    const container = this.#container;
    if (!container) return;
    const attempt = async (what: string, run: () => Promise<void>): Promise<void> => {
      try {
        await run();
      } catch (error) {
        errors.push(new KernelError(`Tenant "${this.tenant}": ${what} failed to deactivate: ${errorMessage(error)}`, { cause: error }));
      }
    };
    for (const binding of this.#moduleBindings.splice(0).reverse()) await attempt('a binding of its module', () => unbindRecorded(container, binding));
    for (const module of [...(this.definition.modules ?? [])].reverse()) await attempt('a module', () => container.unloadAsync(module));
    // What is left (the kernel's own bindings, and those whose deactivation failed) goes with the
    // container: unbinding all again would call a failed @preDestroy a second time.
  }
}

/**
 * The tenants of a kernel. Each tenant's toolset, provider and bindings are its own, never bound in
 * the kernel's container, so nothing of one tenant can be handed to another. A running step keeps
 * the toolset it started with; changes apply to the next step.
 */
export class Tenants {
  private readonly scopes = new Map<string, TenantScope>();
  /** Removals waiting for running steps, by tenant id (a tenant may be defined again meanwhile). */
  private readonly removals = new Map<string, { readonly scope: TenantScope; readonly done: Promise<void> }>();
  /** The container that resolves as any tenant without bindings of its own (see {@link asGuest}). */
  #guest: Container | undefined;
  /** The tenant the guest container resolves as, during a resolution. */
  #guestScope: TenantScope | undefined;

  /** @internal Created by the kernel. */
  constructor(private readonly host: TenantHost) {}

  /**
   * Runs a resolution as `scope` in the guest container: a child of the kernel's whose scope, tenant
   * id and toolset are whichever tenant it currently resolves as. Resolutions are synchronous, and a
   * nested one (for another tenant) restores the outer tenant when it returns.
   */
  #asGuest<T>(scope: TenantScope, resolve: (container: Container) => T): T {
    const guest = (this.#guest ??= this.#newGuest());
    const outer = this.#guestScope;
    this.#guestScope = scope;
    try {
      return resolve(guest);
    } finally {
      this.#guestScope = outer;
    }
  }

  #newGuest(): Container {
    const guest = new Container({ parent: this.host.container });
    const current = (): TenantScope => this.#guestScope!;
    guest.bind(ScopeToken).toDynamicValue(current);
    guest.bind(TenantId).toDynamicValue(() => current().tenant);
    guest.bind(Toolset).toDynamicValue(() => this.host.toolsetFor(current()));
    return guest;
  }

  /** @internal Forgets what the guest container bound for services that are gone (a plugin torn down). */
  releaseGuestBindings(tokens: Iterable<symbol>): void {
    const guest = this.#guest;
    if (!guest) return;
    for (const token of tokens) if (guest.isCurrentBound(token)) guest.unbind(token);
  }

  /**
   * Defines a tenant. An id whose removal is still pending may be defined again: the new tenant is
   * a fresh scope, the old one is disposed when its steps finish. A tenant with bindings of its own
   * (`module`, `modules`) gets the plugins' class-bound services created for it right away (any
   * tenant gets the tenant-only ones), so a dependency it lacks fails here.
   *
   * @throws {KernelError} if the id is taken, or a module binds `StepHooks` (give tenant hooks with
   * `hooks`); {@link UnknownProviderError} for an unknown provider name; {@link PluginError} if a
   * plugin's service cannot be created with the tenant's bindings (naming the plugin and the chain).
   */
  define(id: string, definition: TenantDefinition = {}): void {
    this.host.checkOpen();
    if (typeof id !== 'string' || id === '') throw new KernelError('A tenant id must be a non-empty string');
    if (this.scopes.has(id)) throw new KernelError(`Tenant "${id}" is already defined; remove it first, or use setToolset`);
    if (typeof definition.provider === 'string') this.host.checkProvider(definition.provider);
    const scope = new TenantScope(id, definition, this.host, (guestOf, resolve) => this.#asGuest(guestOf, resolve));
    try {
      if (scope.ownBindings) scope.createContainer();
      this.host.checkScope(scope);
    } catch (error) {
      void scope.dispose([]); // what was created before the failure; a failure to deactivate it is moot
      throw error;
    }
    this.scopes.set(id, scope);
  }

  /**
   * Gives a tenant a new toolset. Steps already running keep theirs; the next step uses this one.
   * A toolset bound by the tenant's modules stays bound (a running step may still use it) and is
   * disposed with the tenant.
   */
  setToolset(id: string, toolset: Toolset): void {
    const scope = this.scope(id);
    scope.toolsetOverride = toolset;
    scope.invalidate();
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
   * then its container is disposed: the services created for it are deactivated in reverse creation
   * order (`@preDestroy`, deactivation handlers, each awaited), then its own bindings. Calling it
   * again while the removal is pending returns the same promise. If some deactivation failed, the
   * promise rejects, after everything ran, with an `AggregateError` of them.
   */
  remove(id: string): Promise<void> {
    const scope = this.scopes.get(id);
    if (!scope) {
      return this.removals.get(id)?.done ?? Promise.reject(new UnknownTenantError(id, this.list()));
    }
    this.scopes.delete(id);
    const done: Promise<void> = scope.leases
      .idle()
      .then(async () => {
        const errors: unknown[] = [];
        await scope.dispose(errors);
        if (errors.length > 0) throw new AggregateError(errors, `Tenant "${id}": some services failed to deactivate`);
      })
      .finally(() => {
        if (this.removals.get(id)?.done === done) this.removals.delete(id);
      });
    this.removals.set(id, { scope, done });
    return done;
  }

  /** @internal The scope of a tenant that can run steps. */
  scope(id: string): TenantScope {
    const scope = this.scopes.get(id);
    if (!scope) throw new UnknownTenantError(id, this.list());
    return scope;
  }

  /** @internal Every scope: defined tenants, and those being removed. */
  *allScopes(): Iterable<TenantScope> {
    yield* this.scopes.values();
    for (const { scope } of this.removals.values()) yield scope;
  }

  /** @internal The defined tenants. */
  definedScopes(): Iterable<TenantScope> {
    return this.scopes.values();
  }

  /**
   * @internal Removes every tenant and waits for every pending removal (kernel disposal); what failed
   * to deactivate is added to `errors`.
   */
  async removeAll(errors: unknown[]): Promise<void> {
    for (const id of this.list()) void this.remove(id).catch(() => undefined); // collected below, once
    const pending = [...this.removals.values()].map((removal) => removal.done);
    for (const outcome of await Promise.allSettled(pending)) {
      if (outcome.status === 'rejected') errors.push(...(outcome.reason instanceof AggregateError ? outcome.reason.errors : [outcome.reason]));
    }
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}
