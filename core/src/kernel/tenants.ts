import type { ContainerModuleLoadOptions } from 'inversify';
import { Container, ContainerModule } from './inversify.js';
import { ChatProvider } from '../provider/chat-provider.js';
import { asNamedHooks, StepHooks, type NamedStepHooks } from '../runtime/hooks/step-hooks.js';
import { Toolset } from '../tooling/toolset.js';
import { recordBindings, serviceName, unbindRecorded, type RecordedBinding } from './binding-recorder.js';
import type { Disposal, DisposalSite, ModuleDeactivations } from './disposal.js';
import { errorMessage, KernelError, UnknownTenantError } from './errors.js';
import { ScopeToken, ServiceScope } from './service-scope.js';
import { TenantId } from './tenant-id.js';
import { TenantGovernor } from '../governance/admission.js';
import type { Governance } from '../governance/governance.js';
import { limitsAnything, validateTenantLimits, type TenantLimits } from '../governance/tenant-limits.js';
import { checkKnownOptions, type KnownOptions } from '../known-options.js';

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
  /**
   * The tenant's limits (pacing, concurrency caps, budget: see {@link TenantLimits}), instead of the
   * kernel's default ones (`KernelOptions.limits`); `{}` is none at all. Changed with
   * `tenants.setLimits`. Checked here: bad limits are a `TypeError`.
   */
  readonly limits?: TenantLimits;
}

const DEFINITION_KEYS: KnownOptions<TenantDefinition> = { toolset: true, provider: true, hooks: true, module: true, modules: true, limits: true };

/** What tenants need of their kernel. @internal */
export interface TenantHost {
  /** The kernel's container: the parent of every tenant's. */
  readonly container: Container;
  /** The ledger, the prices and the default limits. */
  readonly governance: Governance;
  checkProvider(name: string): void;
  checkOpen(): void;
  /** The toolset a step of `scope` uses (what `Toolset` resolves to in the tenant's container). */
  toolsetFor(scope: TenantScope): Toolset;
  /**
   * Creates the plugins' class-bound services that a new tenant does not share with the kernel's
   * scope (the eager check): all of them if it has bindings of its own, else the tenant-only ones.
   */
  checkScope(scope: TenantScope): void;
  /** A disposal reporting to the sink of `scope` (the kernel's for `undefined`), with the kernel's deadline. */
  disposal(scope: TenantScope | undefined): Disposal;
  /** Where module deactivation handlers are tracked (the kernel awaits them). */
  readonly deactivations: ModuleDeactivations;
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
  /** The tenant's own limits (checked, frozen), if it has some: else the kernel's default apply. */
  ownLimits: TenantLimits | undefined;
  /**
   * What holds the tenant's steps to their limits, while it has any (read by every step: `undefined`
   * is the path of a tenant without limits, which costs nothing).
   */
  governor: TenantGovernor | undefined;
  /** The governor, kept while the tenant has no limits (so that places held stay counted if limits come back). */
  #governor: TenantGovernor | undefined;
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

  /** Applies the tenant's limits (its own, else the default): from the next admission on. */
  applyLimits(defaults: TenantLimits | undefined): void {
    const limits = this.ownLimits ?? defaults;
    if (limitsAnything(limits)) {
      if (this.#governor) this.#governor.setLimits(limits);
      else this.#governor = new TenantGovernor(this.tenant, limits, this.host.governance);
      this.governor = this.#governor;
    } else {
      this.governor = undefined;
      this.#governor?.setLimits({}); // queued steps and calls go at once
    }
  }

  /** The limits the tenant's steps are held to now (`undefined`: none). */
  get limits(): TenantLimits | undefined {
    return this.governor?.limits;
  }

  /**
   * The tenant is removed: its queued steps and tool calls fail with the error `reason` makes (made
   * only when it has limits: the error lists every tenant, and a kernel of 10k tenants removes many);
   * running ones finish.
   */
  closeLimits(reason: () => unknown): void {
    if (this.#governor) this.#governor.close(reason());
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
            const recorded = recordBindings(
              options,
              (b) => this.#moduleBindings.push(b),
              (id, handler) => this.host.deactivations.wrap(this.#site(serviceName(id), 'onDeactivation'), handler),
            );
            const returned: unknown = module({ ...recorded, tenant });
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
   * `module` bound (reverse order, with the module deactivation handlers each started), then its
   * `modules`. Each step awaited within the disposal's deadline; failures are reported by it.
   */
  async dispose(disposal: Disposal): Promise<void> {
    await this.deactivate(disposal);
    const container = this.#container;
    if (!container) return;
    const deactivations = this.host.deactivations;
    for (const binding of this.#moduleBindings.splice(0).reverse()) {
      const site = this.#site(binding.service, 'deactivation');
      await deactivations.around(disposal, this.tenant, () => disposal.run(site, () => unbindRecorded(container, binding)));
    }
    const modules = this.definition.modules ?? [];
    for (let i = modules.length - 1; i >= 0; i--) {
      const site = this.#site(`modules[${i}]`, 'unload');
      await deactivations.around(disposal, this.tenant, () => disposal.run(site, () => container.unloadAsync(modules[i]!)));
    }
    // What is left (the kernel's own bindings, and those whose deactivation failed) goes with the
    // container: unbinding all again would call a failed @preDestroy a second time.
  }

  /** Where something the tenant's modules bound is taken down, for reports. */
  #site(service: string, hook: string): DisposalSite {
    return { plugin: undefined, tenant: this.tenant, service, hook };
  }
}

/**
 * The tenants of a kernel. Each tenant's toolset, provider and bindings are its own, never bound in
 * the kernel's container, so nothing of one tenant can be handed to another. A running step keeps
 * the toolset it started with; changes apply to the next step.
 */
export class Tenants {
  private readonly scopes = new Map<string, TenantScope>();
  /**
   * Removals not yet done, by scope, in the order they began: an id may be defined and removed
   * again while an older generation still waits for its steps, and each is waited for.
   */
  private readonly removals = new Map<TenantScope, Promise<void>>();
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
   * @throws TypeError for a key it does not know, or bad `limits` (see `TenantLimits`); {@link KernelError} if the id is taken, or a module binds `StepHooks` (give tenant hooks with
   * `hooks`); {@link UnknownProviderError} for an unknown provider name; {@link PluginError} if a
   * plugin's service cannot be created with the tenant's bindings (naming the plugin and the chain).
   */
  define(id: string, definition: TenantDefinition = {}): void {
    this.host.checkOpen();
    if (typeof id !== 'string' || id === '') throw new KernelError('A tenant id must be a non-empty string');
    // A key it does not know (a misspelt `limit`, an `mcp` that a plugin's helper should take) is an error, never ignored.
    checkKnownOptions(`tenants.define("${id}")`, definition, DEFINITION_KEYS);
    const limits = validateTenantLimits(`tenants.define("${id}")`, definition.limits);
    if (this.scopes.has(id)) throw new KernelError(`Tenant "${id}" is already defined; remove it first, or use setToolset`);
    if (typeof definition.provider === 'string') this.host.checkProvider(definition.provider);
    const scope = new TenantScope(id, definition, this.host, (guestOf, resolve) => this.#asGuest(guestOf, resolve));
    try {
      if (scope.ownBindings) scope.createContainer();
      this.host.checkScope(scope);
    } catch (error) {
      // What was created before the failure is taken back (failures go to the kernel's sink).
      scope.dispose(this.host.disposal(undefined)).catch(() => undefined);
      throw error;
    }
    scope.ownLimits = limits;
    scope.applyLimits(this.host.governance.defaultLimits);
    this.scopes.set(id, scope);
  }

  /**
   * Gives a tenant new limits (see {@link TenantLimits}), from its next admission on: a step or a
   * tool call admitted already keeps its place; queued ones are let in at once if the new caps have
   * room. `undefined`: the kernel's default limits again; `{}`: none at all.
   *
   * @throws TypeError for bad limits (the tenant keeps its limits); {@link UnknownTenantError}.
   */
  setLimits(id: string, limits: TenantLimits | undefined): void {
    const checked = validateTenantLimits(`tenants.setLimits("${id}")`, limits);
    const scope = this.scope(id);
    scope.ownLimits = checked;
    scope.applyLimits(this.host.governance.defaultLimits);
  }

  /**
   * Sets the limits of every tenant without limits of its own (`KernelOptions.limits` at first),
   * from their next admission on. `undefined`: no default limits.
   *
   * @throws TypeError for bad limits (the default stays as it was).
   */
  setDefaultLimits(limits: TenantLimits | undefined): void {
    const checked = validateTenantLimits('tenants.setDefaultLimits', limits);
    const governance = this.host.governance;
    governance.defaultLimits = limitsAnything(checked) ? checked : undefined;
    for (const scope of this.scopes.values()) if (scope.ownLimits === undefined) scope.applyLimits(governance.defaultLimits);
  }

  /**
   * The limits a tenant's steps are held to now (its own, else the default; `undefined`: none).
   *
   * @throws {UnknownTenantError}
   */
  limitsOf(id: string): TenantLimits | undefined {
    return this.scope(id).limits;
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
   * Removes a tenant: new steps for it fail at once, steps and tool calls queued by its limits fail
   * with an {@link UnknownTenantError}, running ones finish (through their cleanup),
   * then its container is disposed: the services created for it are deactivated in reverse creation
   * order (`@preDestroy`, deactivation handlers, each awaited, at most the kernel's
   * `deactivationTimeoutMs` each), then its own bindings. A deactivation that fails or passes the
   * deadline is reported to the tenant's `HookErrorSink` (a `DisposalErrorReport` naming the
   * tenant, the plugin and the service) and the rest still runs: the promise resolves once everything
   * ran, and never rejects for a deactivation. Calling it again while the removal is pending returns
   * the same promise.
   *
   * @returns a promise rejected with {@link UnknownTenantError} if no tenant has the id (and no removal of it is pending).
   */
  remove(id: string): Promise<void> {
    const scope = this.scopes.get(id);
    if (!scope) return this.#pendingRemoval(id) ?? Promise.reject(new UnknownTenantError(id, this.list()));
    this.scopes.delete(id);
    scope.closeLimits(() => new UnknownTenantError(id, this.list()));
    const done: Promise<void> = scope.leases
      .idle()
      .then(async () => {
        const disposal = this.host.disposal(scope); // the tenant's sink, resolved before anything is taken down
        try {
          await scope.dispose(disposal);
        } catch (error) {
          disposal.report({ plugin: undefined, tenant: id, service: 'its container', hook: 'dispose' }, 'threw', error);
        }
      })
      .finally(() => this.removals.delete(scope));
    this.removals.set(scope, done);
    return done;
  }

  /** The latest pending removal of a tenant id, if any. */
  #pendingRemoval(id: string): Promise<void> | undefined {
    let latest: Promise<void> | undefined;
    for (const [scope, done] of this.removals) if (scope.tenant === id) latest = done;
    return latest;
  }

  /** @internal The scope of a tenant that can run steps. */
  scope(id: string): TenantScope {
    const scope = this.scopes.get(id);
    if (!scope) throw new UnknownTenantError(id, this.list());
    return scope;
  }

  /**
   * @internal The scope of a tenant whose steps may still run: a defined one, else the latest
   * generation of the id still being removed (its running steps finish in it).
   */
  liveScope(id: string): TenantScope {
    const scope = this.scopes.get(id);
    if (scope) return scope;
    let latest: TenantScope | undefined;
    for (const removing of this.removals.keys()) if (removing.tenant === id) latest = removing;
    if (!latest) throw new UnknownTenantError(id, this.list());
    return latest;
  }

  /** @internal Every scope: defined tenants, and those being removed. */
  *allScopes(): Iterable<TenantScope> {
    yield* this.scopes.values();
    yield* this.removals.keys();
  }

  /** @internal The defined tenants. */
  definedScopes(): Iterable<TenantScope> {
    return this.scopes.values();
  }

  /**
   * @internal Removes every tenant and waits for every pending removal, of every generation of every
   * id (kernel disposal). Failures are reported by each removal.
   */
  async removeAll(): Promise<void> {
    for (const id of this.list()) void this.remove(id);
    await Promise.all([...this.removals.values()]);
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}
