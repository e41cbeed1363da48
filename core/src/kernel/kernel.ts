import { Container, ContainerModule } from './inversify.js';
import { Agent, type AgentOptions } from '../agent/agent.js';
import { ChatProvider } from '../provider/chat-provider.js';
import { StepHooks, type NamedStepHooks } from '../runtime/hooks/step-hooks.js';
import { emptyToolset, Toolset } from '../tooling/toolset.js';
import { ApprovalHandler } from './approval-handler.js';
import type { Contribution } from './contribution.js';
import type { HookErrorHandler } from '../runtime/hooks/hook-guard.js';
import { DEFAULT_DEACTIVATION_TIMEOUT_MS, Disposal, ModuleDeactivations } from './disposal.js';
import { errorMessage, KernelError, PluginError, UnknownProviderError } from './errors.js';
import { HookErrorSink, stderrHookErrorSink } from './hook-error-sink.js';
import { KernelOptions } from './kernel-options.js';
import { LifetimePlanner, scopeMismatchError } from './lifetimes.js';
import type { Plugin } from './plugin.js';
import { createPluginContext, type PluginHost } from './plugin-context.js';
import { PluginRecord } from './plugin-record.js';
import { ABSENT_IN_KERNEL_SCOPE, ScopedServices } from './scoped-services.js';
import { KernelScope, ScopeToken, type ScopeServices, type ServiceScope } from './service-scope.js';
import { StepRunner, type ResolvedStep } from './step-runner.js';
import { TenantId } from './tenant-id.js';
import { Tenants, TenantScope } from './tenants.js';
import { Governance } from '../governance/governance.js';
import { checkLimitStore } from '../governance/limit-store.js';
import { UsagePricing, validatePriceTable } from '../governance/pricing.js';
import { validateTenantLimits } from '../governance/tenant-limits.js';
import type { UsageLedger } from '../governance/usage-ledger.js';

/** Options of {@link Kernel.runner}. */
export interface RunnerOptions {
  /** Run steps for this tenant: its toolset, provider and hooks (plus the global ones). */
  readonly tenant?: string;
  /** Use the provider registered under this name (else the tenant's, else the default). */
  readonly provider?: string;
}

/** Options of {@link Kernel.agent}. */
export interface KernelAgentOptions extends RunnerOptions, Omit<AgentOptions, 'step' | 'runTurn'> {}

/**
 * The kernel: an inversify container from which providers, toolsets and hook plugins are resolved,
 * plus a scope per tenant. It wires; `step()` does the work.
 *
 * What a step of a scope resolves (provider, toolset, hooks, hook-error sink) is cached until the
 * next `use`, the tenant's `setToolset`, or its redefinition; bindings changed through
 * {@link Kernel.container} directly are not noticed before then.
 *
 * @example
 * const kernel = new Kernel();
 * await kernel.use(echoPlugin, toolsPlugin, timingPlugin);
 * kernel.tenants.define('acme', { toolset: acmeTools });
 * const result = await kernel.runner({ tenant: 'acme' }).step({ systemPrompt, history });
 */
export class Kernel {
  /** The inversify container, as an escape hatch. Prefer plugins for bindings. */
  readonly container = new Container();
  /** The tenants: scopes with their own toolsets, providers, hooks, bindings and limits. */
  readonly tenants: Tenants;
  /**
   * The usage ledger: every step run through this kernel's runners (and agents) that ended with a
   * `TokenUsage` is recorded, by tenant, provider, model and UTC day, with its cost —
   * `await kernel.usage.query({ tenant, since, until, groupBy })`. `KernelOptions.usageLedger`,
   * else in memory.
   */
  readonly usage: UsageLedger;

  /** The kernel's own scope: steps without a tenant, and the plugins' services. */
  readonly #scope = new KernelScope(this.container);
  readonly #records = new Map<string, PluginRecord>();
  readonly #hookOwners = new WeakMap<object, string>();
  readonly #services: ScopedServices;
  readonly #options: KernelOptions;
  /** The options every step gets as defaults (the step options among {@link #options}). */
  readonly #stepDefaults: ResolvedStep['defaults'];
  /** The plugins' and tenants' module deactivation handlers still running (disposal awaits them). */
  readonly #deactivations = new ModuleDeactivations();
  /** The disposal, once begun (a second `dispose` returns it). */
  #disposing: Promise<void> | undefined;
  /** Bumped whenever the plugins change: what scopes resolved before is stale. */
  #revision = 0;
  /** Decides where the plugins' undeclared classes are created, from what they declare to inject. */
  readonly #planner: LifetimePlanner;
  /** Whether some hooks, sink or approval handler is created per tenant (then tenants resolve their own), by revision. */
  #perTenantServices = { revision: -1, value: false };
  /** Whether some contribution to an extension point is created per tenant, by point, for one revision. */
  #perTenantPoints = { revision: -1, points: new Map<symbol | string, boolean>() };
  #queue: Promise<unknown> = Promise.resolve();
  #disposed = false;
  readonly #governance: Governance;

  /**
   * @throws TypeError for bad `limits` or `prices`, a `usageLedger` that is not a ledger, or a `limitStore` that is not one.
   */
  constructor(options: KernelOptions = {}) {
    this.#options = options;
    const { usageLedger } = options;
    if (usageLedger !== undefined && (typeof usageLedger?.record !== 'function' || typeof usageLedger.query !== 'function' || typeof usageLedger.spentUsd !== 'function')) {
      throw new TypeError('new Kernel(): usageLedger must be a UsageLedger (record, query, spentUsd)');
    }
    this.usage = usageLedger ?? Governance.memoryLedger();
    this.#governance = new Governance(
      this.usage,
      validatePriceTable('new Kernel()', options.prices),
      validateTenantLimits('new Kernel()', options.limits),
      checkLimitStore('new Kernel()', options.limitStore),
    );
    const { dispatch, hookTimeoutMs, cleanupTimeoutMs } = options;
    this.#stepDefaults = {
      ...(dispatch === undefined ? {} : { dispatch }),
      ...(hookTimeoutMs === undefined ? {} : { hookTimeoutMs }),
      ...(cleanupTimeoutMs === undefined ? {} : { cleanupTimeoutMs }),
    };
    this.#planner = new LifetimePlanner({
      perTenantService: (id, name) => perTenantKernelService(id, name),
      contributions: (id, name) => this.#contributionsBoundTo(id, name),
      rawTargets: (id) => [...this.#records.values()].flatMap((r) => r.rawTargets.get(id) ?? []),
    });
    this.#services = new ScopedServices(
      this.#scope,
      (contribution, instance) => {
        if (contribution.kind === 'hooks') this.#hookOwners.set(instance, contribution.plugin);
      },
      (contribution) => this.#planner.lifetimeOf(contribution),
    );
    this.tenants = new Tenants({
      container: this.container,
      governance: this.#governance,
      checkProvider: (name) => this.#checkProvider(name),
      checkOpen: () => this.#checkOpen(),
      toolsetFor: (scope) => this.#toolsetFor(scope),
      checkScope: (scope) => {
        const classes = this.#classContributions();
        if (!scope.ownBindings && !classes.some((c) => c.tenantOnly)) return; // it shares the kernel's instances
        for (const contribution of classes) this.#services.valueIn(contribution, scope);
      },
      disposal: (scope) => this.#disposal(scope ?? this.#scope),
      deactivations: this.#deactivations,
    });
    this.container.load(this.#kernelModule());
  }

  /**
   * Uses plugins, in dependency order. All or nothing: if any plugin is invalid, a duplicate, misses a
   * requirement, fails in `setup`, or binds a class that cannot be created (each class-bound service
   * is created once right away), everything this call bound is removed again and the error (a
   * {@link PluginError} naming the plugin) is thrown; the kernel is as it was before the call.
   */
  use(...plugins: Plugin[]): Promise<void> {
    const run = this.#queue.then(() => this.#use(plugins));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /** A runner of steps for a tenant (or none) and a provider choice. */
  runner(options: RunnerOptions = {}): StepRunner {
    this.#checkOpen();
    if (options.tenant !== undefined) this.tenants.scope(options.tenant);
    if (options.provider !== undefined) this.#checkProvider(options.provider);
    return this.#runner(options.tenant, options.provider);
  }

  /**
   * An agent loop whose steps run through `runner({tenant, provider})`, so the tenant's toolset,
   * provider and hooks (and the global ones) apply to every step.
   */
  agent(options: KernelAgentOptions): Agent {
    const { tenant, provider, ...agentOptions } = options;
    const runner = this.runner({ ...(tenant === undefined ? {} : { tenant }), ...(provider === undefined ? {} : { provider }) });
    return new Agent({
      ...agentOptions,
      step: (stepOptions) => runner.step(stepOptions),
      runTurn: (turn, run) => runner.runTurn(turn, run),
      onRetry: (retry) => {
        agentOptions.onRetry?.(retry);
        runner.notifyRetry(retry);
      },
    });
  }

  /** The names of the used plugins, in the order they were used. */
  plugins(): string[] {
    return [...this.#records.keys()];
  }

  /** The names of the registered chat providers; the default one first. */
  providers(): string[] {
    const names = [...this.#records.values()].flatMap((r) => r.providerNames());
    const fallback = this.#defaultProvider();
    return fallback === undefined ? names : [fallback, ...names.filter((n) => n !== fallback)];
  }

  /**
   * Disposes the kernel: removes every tenant and waits for every running step (tenant or not, of
   * every generation of a tenant id defined again) to finish; then, plugin by plugin in reverse
   * order, deactivates its services (reverse creation order: `@preDestroy` and deactivation
   * handlers), its raw bindings one by one in reverse order (with the module deactivation handlers
   * each starts), and runs its dispose callbacks; then unbinds everything left. Each is awaited, at
   * most `deactivationTimeoutMs` (default 5 s); nothing is deactivated twice. A failure or a deadline
   * passed is reported to the `HookErrorSink` (the tenant's for a tenant's services) as a
   * `DisposalErrorReport` naming the plugin, the service and the tenant, and the rest still
   * runs: the promise resolves once everything ran, and does not reject for a deactivation. Calling
   * it again returns the same promise.
   */
  dispose(): Promise<void> {
    return (this.#disposing ??= this.#dispose());
  }

  async #dispose(): Promise<void> {
    await this.#queue;
    this.#disposed = true;
    const disposal = this.#disposal(this.#scope); // the kernel's sink, resolved before anything is taken down
    await Promise.all([this.tenants.removeAll(), this.#scope.leases.idle()]);
    let clean = true;
    for (const record of [...this.#records.values()].reverse()) {
      clean = (await record.teardown(this.container, [this.#scope], disposal, this.#deactivations, true)) && clean;
    }
    this.#records.clear();
    // What is left: the kernel's own bindings, and any the application bound on the container. (Not
    // if a binding failed to deactivate: inversify would try it again.)
    if (clean) {
      const site = { plugin: undefined, tenant: undefined, service: 'its container', hook: 'unbindAll' };
      await this.#deactivations.around(disposal, undefined, () => disposal.run(site, () => this.container.unbindAllAsync()));
    }
    await this.#deactivations.drainBackground(disposal);
  }

  /**
   * A disposal of `scope`'s services: reporting to the scope's hook-error sink (resolved now; stderr
   * if none is bound or it cannot be resolved), with the kernel's deadline.
   */
  #disposal(scope: ServiceScope): Disposal {
    let onError: HookErrorHandler;
    try {
      onError = this.#hookErrorHandler(scope);
    } catch {
      onError = stderrHookErrorSink.report;
    }
    return new Disposal(this.#options.deactivationTimeoutMs ?? DEFAULT_DEACTIVATION_TIMEOUT_MS, onError);
  }

  /** The hook-error handler of a scope's steps (resolving only the sinks, if its services are not resolved yet). */
  #hookErrorHandler(scope: ServiceScope): HookErrorHandler {
    const home = this.#servicesHome(scope);
    if (home.services) return home.services.onHookError;
    const sink = this.#sinkOf(home.resolveIn((container) => container.getAll<HookErrorSink>(HookErrorSink)));
    return (report) => sink.report(report);
  }

  async #use(plugins: readonly Plugin[]): Promise<void> {
    this.#checkOpen();
    const ordered = this.#order(plugins);
    const records: PluginRecord[] = [];
    const host: PluginHost = {
      records: this.#records,
      hookOwners: this.#hookOwners,
      services: this.#services,
      deactivations: this.#deactivations,
      toolsetFor: (scope) => this.#toolsetFor(scope),
      contributionsTo: (id, tenant) => this.#contributionsTo(id, tenant),
    };
    try {
      for (const plugin of ordered) {
        const record = new PluginRecord(plugin);
        record.module = new ContainerModule((options) => plugin.setup(createPluginContext(record, options, host)));
        records.push(record);
        this.#records.set(plugin.name, record);
        try {
          await this.container.loadAsync(record.module);
        } catch (error) {
          throw PluginError.isInstance(error) ? error : new PluginError(plugin.name, 'setup-failed', `setup failed: ${errorMessage(error)}`, { cause: error });
        }
      }
      // Where each class of this call is created is settled now, from what it declares to inject;
      // a class declared shared must not inject anything that differs per tenant.
      const added = records.flatMap((r) => r.contributions).filter((c) => c.class);
      for (const contribution of added) {
        this.#planner.lifetimeOf(contribution);
        const perTenant = contribution.declared === 'shared' ? this.#planner.perTenantDependency(contribution.class!) : undefined;
        if (perTenant) throw scopeMismatchError(contribution, perTenant, false);
      }
      // The eager check: every class-bound service of this call is created once, in the kernel's
      // scope and in every tenant with bindings of its own (a tenant-only one: in every tenant).
      for (const contribution of added) if (!contribution.tenantOnly) this.#services.valueIn(contribution, this.#scope);
      for (const scope of [...this.tenants.definedScopes()]) {
        for (const contribution of added) if (scope.ownBindings || contribution.tenantOnly) this.#services.valueIn(contribution, scope);
      }
    } catch (error) {
      // What the failed call created is taken back as a disposal would, its failures not reported
      // (the call fails with its own error).
      const rollback = new Disposal(this.#options.deactivationTimeoutMs ?? DEFAULT_DEACTIVATION_TIMEOUT_MS, () => undefined);
      const scopes = [...this.tenants.allScopes(), this.#scope];
      for (const record of records.reverse()) {
        await record.teardown(this.container, scopes, rollback, this.#deactivations, false);
        this.tenants.releaseGuestBindings(record.contributions.map((c) => c.token));
        this.#records.delete(record.name);
      }
      throw error;
    } finally {
      this.#revision++;
    }
  }

  /** Checks names and requirements, and orders the plugins so each comes after what it requires. */
  #order(plugins: readonly Plugin[]): Plugin[] {
    const batch = new Map<string, Plugin>();
    for (const plugin of plugins) {
      const name: unknown = plugin?.name;
      if (typeof name !== 'string' || name === '' || typeof plugin.setup !== 'function') {
        throw new PluginError(String(name), 'invalid', 'not a plugin (it needs a name and a setup function; use definePlugin)');
      }
      if (this.#records.has(name) || batch.has(name)) throw new PluginError(name, 'duplicate', 'a plugin with this name is already used');
      batch.set(name, plugin);
    }
    const ordered: Plugin[] = [];
    const state = new Map<string, 'visiting' | 'done'>();
    const visit = (plugin: Plugin, path: string[]): void => {
      const mark = state.get(plugin.name);
      if (mark === 'done') return;
      if (mark === 'visiting') {
        throw new PluginError(plugin.name, 'requirement-cycle', `requirements form a cycle: ${[...path, plugin.name].join(' → ')}`);
      }
      state.set(plugin.name, 'visiting');
      for (const required of plugin.requires ?? []) {
        const inBatch = batch.get(required);
        if (inBatch) visit(inBatch, [...path, plugin.name]);
        else if (!this.#records.has(required)) {
          throw new PluginError(plugin.name, 'missing-requirement', `requires plugin "${required}", which is not used`);
        }
      }
      state.set(plugin.name, 'done');
      ordered.push(plugin);
    };
    for (const plugin of batch.values()) visit(plugin, []);
    return ordered;
  }

  /**
   * What the kernel binds itself: the scope of its container, and the services a plugin's class may
   * inject that differ between scopes (tenant id, step runner, default provider) or not (options,
   * the prices of the usage ledger).
   */
  #kernelModule(): ContainerModule {
    return new ContainerModule(({ bind }) => {
      bind(ScopeToken).toConstantValue(this.#scope);
      bind(KernelOptions).toConstantValue(this.#options);
      bind(UsagePricing).toConstantValue(this.#governance.pricing);
      bind(TenantId).toDynamicValue(() => {
        this.#services.perTenant('TenantId');
        return undefined;
      });
      bind(StepRunner).toDynamicValue((context) => {
        this.#services.perTenant('StepRunner');
        return this.#runner(this.#services.scopeOf(context).tenant, undefined);
      });
      bind(ChatProvider)
        .toDynamicValue((context) => {
          this.#services.perTenant(DEFAULT_PROVIDER);
          return this.#providerFor(this.#services.scopeOf(context), undefined);
        })
        .whenDefault();
    });
  }

  #runner(tenant: string | undefined, provider: string | undefined): StepRunner {
    return new StepRunner((t, p) => this.#resolve(t, p), tenant, provider);
  }

  #resolve(tenant: string | undefined, providerName: string | undefined): ResolvedStep {
    this.#checkOpen();
    const scope = this.#fresh(tenant === undefined ? this.#scope : this.tenants.scope(tenant));
    const key = providerName ?? '';
    let resolved = scope.steps.get(key);
    if (resolved === undefined) {
      resolved = this.#resolveStep(scope, providerName);
      scope.steps.set(key, resolved);
    }
    return resolved;
  }

  /** The scope, with what it resolved forgotten if the plugins changed since. */
  #fresh<S extends ServiceScope>(scope: S): S {
    if (scope.revision !== this.#revision) {
      scope.invalidate();
      scope.revision = this.#revision;
    }
    return scope;
  }

  #resolveStep(scope: ServiceScope, providerName: string | undefined): ResolvedStep {
    const services = this.#servicesOf(scope);
    const own = scope instanceof TenantScope ? scope.hooks : [];
    return {
      provider: this.#providerFor(scope, providerName),
      toolset: this.#toolsetFor(scope),
      hooks: own.length === 0 ? services.hooks : [...services.hooks, ...own],
      onHookError: services.onHookError,
      onApproval: services.onApproval,
      defaults: this.#stepDefaults,
      lease: () => scope.leases.lease(),
      limited: scope instanceof TenantScope ? scope : UNLIMITED,
      governance: this.#governance,
    };
  }

  /**
   * The plugins' hooks, hook-error sink and approval handler for a scope's steps. A tenant without bindings of its own
   * shares the kernel scope's, unless some service differs per tenant.
   */
  #servicesOf(scope: ServiceScope): ScopeServices {
    const home = this.#servicesHome(scope);
    if (home.services) return home.services;
    const [allHooks, sinks, approvers] = home.resolveIn((container): [StepHooks[], HookErrorSink[], ApprovalHandler[]] => [
      container.getAll<StepHooks>(StepHooks),
      container.getAll<HookErrorSink>(HookErrorSink),
      container.getAll<ApprovalHandler>(ApprovalHandler),
    ]);
    const hooks: NamedStepHooks[] = allHooks.flatMap((h, i) =>
      h === ABSENT_IN_KERNEL_SCOPE ? [] : [{ name: this.#hookOwners.get(h) ?? `hooks #${i + 1}`, hooks: h }],
    );
    const sink = this.#sinkOf(sinks);
    const approver = approvers.findLast((a) => a !== ABSENT_IN_KERNEL_SCOPE);
    return (home.services = {
      hooks,
      onHookError: (report) => sink.report(report),
      onApproval: approver && ((request) => approver.decide(request)),
    });
  }

  /** Where a scope's hooks and sink are resolved: a tenant without bindings of its own shares the kernel scope's, unless one of them is created per tenant. */
  #servicesHome(scope: ServiceScope): ServiceScope {
    return scope instanceof TenantScope && !scope.ownBindings && !this.#anyPerTenantService() ? this.#fresh(this.#scope) : this.#fresh(scope);
  }

  /**
   * The contributions to an extension point as the scope of `tenant` (or the kernel's) has them,
   * resolved once per scope and revision (a tenant without bindings of its own shares the kernel
   * scope's unless one of them is created per tenant); tenant-only ones left out in the kernel's scope.
   */
  #contributionsTo(id: symbol | string, tenant: string | undefined): readonly object[] {
    this.#checkOpen();
    const scope = this.#fresh(tenant === undefined ? this.#scope : this.tenants.liveScope(tenant));
    const home = scope instanceof TenantScope && !scope.ownBindings && !this.#anyPerTenantContribution(id) ? this.#fresh(this.#scope) : scope;
    let values = home.extensions?.get(id);
    if (values === undefined) {
      values = Object.freeze(home.resolveIn((container) => container.getAll<object>(id)).filter((value) => value !== ABSENT_IN_KERNEL_SCOPE));
      (home.extensions ??= new Map()).set(id, values);
    }
    return values;
  }

  #anyPerTenantContribution(id: symbol | string): boolean {
    if (this.#perTenantPoints.revision !== this.#revision) this.#perTenantPoints = { revision: this.#revision, points: new Map() };
    const { points } = this.#perTenantPoints;
    let perTenant = points.get(id);
    if (perTenant === undefined) points.set(id, (perTenant = this.#contributionsBoundTo(id, undefined).some((c) => c.perTenant)));
    return perTenant;
  }

  /** The helper-bound contributions `id` (asked for `name`d) resolves to, of every plugin used or being used. */
  #contributionsBoundTo(id: unknown, name: unknown): Contribution[] {
    const all = [...this.#records.values()].flatMap((r) => r.contributions);
    return all.filter((c) => c.id === id && (id !== ChatProvider || c.name === name));
  }

  /** The sink a scope uses of those bound there: the last one (not absent there), else stderr. */
  #sinkOf(sinks: readonly HookErrorSink[]): HookErrorSink {
    return sinks.findLast((s) => s !== ABSENT_IN_KERNEL_SCOPE) ?? stderrHookErrorSink;
  }

  /** The provider a step of `scope` uses: the one named, else the tenant's own, else the default. */
  #providerFor(scope: ServiceScope, providerName: string | undefined): ChatProvider {
    const tenant = scope instanceof TenantScope ? scope : undefined;
    let name = providerName ?? tenant?.providerName;
    if (name === undefined) {
      if (tenant?.ownProvider) return tenant.ownProvider;
      if (tenant?.moduleProvider) return tenant.container!.get<ChatProvider>(ChatProvider);
      name = this.#defaultProvider();
      if (name === undefined) throw new UnknownProviderError(undefined, []);
    }
    const contribution = this.#providerContribution(name);
    if (!contribution) throw new UnknownProviderError(name, this.providers());
    return this.#services.valueIn(contribution, scope);
  }

  /** The toolset a step of `scope` uses: the tenant's own (set, given, or bound by its modules), else the global one. */
  #toolsetFor(scope: ServiceScope): Toolset {
    if (scope instanceof TenantScope) {
      const own = scope.toolsetOverride ?? scope.ownToolset;
      if (own) return own;
      if (scope.moduleToolset) return scope.container!.get<Toolset>(Toolset);
    }
    const global = [...this.#records.values()].find((r) => r.toolset)?.toolset;
    if (global) return this.#services.valueIn(global, scope);
    return this.container.isBound(Toolset) ? this.container.get<Toolset>(Toolset) : emptyToolset;
  }

  #classContributions(): Contribution[] {
    return [...this.#records.values()].flatMap((r) => r.contributions).filter((c) => c.class);
  }

  #anyPerTenantService(): boolean {
    if (this.#perTenantServices.revision !== this.#revision) {
      const perTenant = this.#classContributions().some((c) => (c.kind === 'hooks' || c.kind === 'hook-error sink' || c.kind === 'approval handler') && c.perTenant);
      this.#perTenantServices = { revision: this.#revision, value: perTenant };
    }
    return this.#perTenantServices.value;
  }

  #providerContribution(name: string): Contribution<ChatProvider> | undefined {
    for (const record of this.#records.values()) for (const provider of record.providers) if (provider.name === name) return provider;
    return undefined;
  }

  #checkProvider(name: string): void {
    if (this.#providerContribution(name) === undefined) throw new UnknownProviderError(name, this.providers());
  }

  #defaultProvider(): string | undefined {
    const records = [...this.#records.values()];
    return (records.find((r) => r.claimedDefault) ?? records.find((r) => r.providers.length > 0))?.providers[0]?.name;
  }

  #checkOpen(): void {
    if (this.#disposed) throw new KernelError('The kernel is disposed');
  }
}

/** What the kernel's own scope is limited by: nothing. */
const UNLIMITED: ResolvedStep['limited'] = Object.freeze({ governor: undefined });

/** How errors name the default `ChatProvider` (the scope's: it differs per tenant). */
const DEFAULT_PROVIDER = 'ChatProvider (the default provider)';

/** How errors name what the kernel binds `id` (asked for `name`d) to when it differs per tenant, else `undefined`. */
function perTenantKernelService(id: unknown, name: unknown): string | undefined {
  if (id === TenantId) return 'TenantId';
  if (id === StepRunner) return 'StepRunner';
  if (id === Toolset) return 'Toolset';
  if (id === ChatProvider && name === undefined) return DEFAULT_PROVIDER;
  return undefined;
}
