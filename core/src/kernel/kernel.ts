import { Container, ContainerModule, type ContainerModuleLoadOptions } from 'inversify';
import { Agent, type AgentOptions } from '../agent/agent.js';
import { ChatProvider } from '../provider/chat-provider.js';
import type { StepOptions } from '../runtime/step.js';
import { StepHooks, type NamedStepHooks } from '../runtime/step-hooks.js';
import { emptyToolset, Toolset } from '../tooling/toolset.js';
import { KernelError, PluginError, UnknownProviderError } from './errors.js';
import { HookErrorSink, stderrHookErrorSink } from './hook-error-sink.js';
import type { Plugin, PluginContext, ProviderBindingOptions } from './plugin.js';
import { StepRunner, type ResolvedStep } from './step-runner.js';
import { StepLeases } from './leases.js';
import { Tenants } from './tenants.js';

/** Options of a {@link Kernel}: defaults for every step it runs. */
export type KernelOptions = Pick<StepOptions, 'dispatch' | 'hookTimeoutMs' | 'cleanupTimeoutMs'>;

/** Options of {@link Kernel.runner}. */
export interface RunnerOptions {
  /** Run steps for this tenant: its toolset, provider and hooks (plus the global ones). */
  readonly tenant?: string;
  /** Use the provider registered under this name (else the tenant's, else the default). */
  readonly provider?: string;
}

/** Options of {@link Kernel.agent}. */
export interface KernelAgentOptions extends RunnerOptions, Omit<AgentOptions, 'step'> {}

/** What one used plugin contributed. */
interface UsedPlugin {
  readonly plugin: Plugin;
  readonly module: ContainerModule;
  readonly providers: string[];
  readonly disposers: (() => void | Promise<void>)[];
  claimedDefault: boolean;
  ownsToolset: boolean;
}

/**
 * The kernel: an inversify container from which providers, toolsets and hook plugins are resolved,
 * plus per-tenant child containers. It wires; `step()` does the work.
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
  /** The tenants: child containers with their own toolsets, providers and hooks. */
  readonly tenants: Tenants;

  /** Steps running without a tenant (disposal waits for them). */
  readonly #leases = new StepLeases();
  readonly #used = new Map<string, UsedPlugin>();
  readonly #hookOwners = new WeakMap<object, string>();
  readonly #options: KernelOptions;
  #queue: Promise<unknown> = Promise.resolve();
  #disposed = false;

  constructor(options: KernelOptions = {}) {
    this.#options = options;
    this.tenants = new Tenants(
      this.container,
      (name) => this.#checkProvider(name),
      () => this.#checkOpen(),
    );
  }

  /**
   * Uses plugins, in dependency order. All or nothing: if any plugin is invalid, a duplicate, misses a
   * requirement or fails in `setup`, everything this call bound is removed again and the error (a
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
    return new StepRunner((tenant, provider) => this.#resolve(tenant, provider), options.tenant, options.provider);
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
      onRetry: (retry) => {
        agentOptions.onRetry?.(retry);
        runner.notifyRetry(retry);
      },
    });
  }

  /** The names of the used plugins, in the order they were used. */
  plugins(): string[] {
    return [...this.#used.keys()];
  }

  /** The names of the registered chat providers; the default one first. */
  providers(): string[] {
    const names = [...this.#used.values()].flatMap((u) => u.providers);
    const fallback = this.#defaultProvider();
    return fallback === undefined ? names : [fallback, ...names.filter((n) => n !== fallback)];
  }

  /**
   * Disposes the kernel: removes every tenant and waits for every running step (tenant or not) to
   * finish, runs the plugins' dispose callbacks in reverse order, and unbinds everything
   * (deactivation handlers run).
   */
  async dispose(): Promise<void> {
    if (this.#disposed) return;
    await this.#queue;
    this.#disposed = true;
    await Promise.all([this.tenants.removeAll(), this.#leases.idle()]);
    const errors: unknown[] = [];
    for (const used of [...this.#used.values()].reverse()) await runDisposers(used, errors);
    this.#used.clear();
    await this.container.unbindAllAsync();
    if (errors.length > 0) throw new AggregateError(errors, 'Some plugins failed to dispose');
  }

  async #use(plugins: readonly Plugin[]): Promise<void> {
    this.#checkOpen();
    const ordered = this.#order(plugins);
    const done: UsedPlugin[] = [];
    try {
      for (const plugin of ordered) {
        const used: UsedPlugin = {
          plugin,
          module: new ContainerModule((options) => plugin.setup(this.#context(used, options))),
          providers: [],
          disposers: [],
          claimedDefault: false,
          ownsToolset: false,
        };
        done.push(used);
        this.#used.set(plugin.name, used);
        try {
          await this.container.loadAsync(used.module);
        } catch (error) {
          throw PluginError.isInstance(error) ? error : new PluginError(plugin.name, 'setup-failed', `setup failed: ${describe(error)}`, { cause: error });
        }
      }
    } catch (error) {
      const cleanupErrors: unknown[] = [];
      for (const used of done.reverse()) {
        this.#used.delete(used.plugin.name);
        await runDisposers(used, cleanupErrors);
        await this.container.unloadAsync(used.module);
      }
      throw error;
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
      if (this.#used.has(name) || batch.has(name)) throw new PluginError(name, 'duplicate', 'a plugin with this name is already used');
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
        else if (!this.#used.has(required)) {
          throw new PluginError(plugin.name, 'missing-requirement', `requires plugin "${required}", which is not used`);
        }
      }
      state.set(plugin.name, 'done');
      ordered.push(plugin);
    };
    for (const plugin of batch.values()) visit(plugin, []);
    return ordered;
  }

  #context(used: UsedPlugin, options: ContainerModuleLoadOptions): PluginContext {
    const name = used.plugin.name;
    return {
      ...options,
      plugin: name,
      bindChatProvider: (providerName: string, provider: ChatProvider | (() => ChatProvider), bindingOptions: ProviderBindingOptions = {}) => {
        if (typeof providerName !== 'string' || providerName === '') throw new PluginError(name, 'invalid', 'a provider needs a non-empty name');
        const owner = this.#providerOwner(providerName);
        if (owner !== undefined || used.providers.includes(providerName)) {
          throw new PluginError(name, 'conflict', `chat provider "${providerName}" is already registered by plugin "${owner ?? name}"`);
        }
        if (bindingOptions.default) {
          const claimed = [...this.#used.values()].find((u) => u.claimedDefault);
          if (claimed) throw new PluginError(name, 'conflict', `plugin "${claimed.plugin.name}" already registered the default provider`);
          used.claimedDefault = true;
        }
        const binding = options.bind(ChatProvider);
        if (typeof provider === 'function') binding.toDynamicValue(() => provider()).inSingletonScope().whenNamed(providerName);
        else binding.toConstantValue(provider).whenNamed(providerName);
        used.providers.push(providerName);
        if (bindingOptions.default) used.providers.unshift(used.providers.pop()!);
      },
      bindToolset: (toolset) => {
        const owner = [...this.#used.values()].find((u) => u.ownsToolset);
        if (owner) throw new PluginError(name, 'conflict', `plugin "${owner.plugin.name}" already bound the global toolset (combine them into one)`);
        options.bind(Toolset).toConstantValue(toolset);
        used.ownsToolset = true;
      },
      bindHooks: (hooks) => {
        const owner = this.#hookOwners.get(hooks);
        if (owner !== undefined && owner !== name && this.#used.has(owner)) {
          throw new PluginError(name, 'conflict', `this hooks object is already bound by plugin "${owner}"; give each plugin its own`);
        }
        this.#hookOwners.set(hooks, name);
        options.bind(StepHooks).toConstantValue(hooks);
      },
      bindHookErrorSink: (sink) => {
        options.bind(HookErrorSink).toConstantValue(sink);
      },
      onDispose: (dispose) => {
        used.disposers.push(dispose);
      },
    };
  }

  #resolve(tenant: string | undefined, providerName: string | undefined): ResolvedStep {
    this.#checkOpen();
    const scope = tenant === undefined ? undefined : this.tenants.scope(tenant);
    const own = scope?.container;

    let provider: ChatProvider;
    const name = providerName ?? scope?.providerName;
    if (name !== undefined) provider = this.#providerByName(name);
    else if (own?.isCurrentBound(ChatProvider)) provider = own.get<ChatProvider>(ChatProvider);
    else {
      const fallback = this.#defaultProvider();
      if (fallback === undefined) throw new UnknownProviderError(undefined, []);
      provider = this.#providerByName(fallback);
    }

    const toolset = scope?.toolset ?? (this.container.isBound(Toolset) ? this.container.get<Toolset>(Toolset) : emptyToolset);

    const hooks: NamedStepHooks[] = this.container
      .getAll<StepHooks>(StepHooks)
      .map((h, i) => ({ name: this.#hookOwners.get(h) ?? `hooks #${i + 1}`, hooks: h }));
    if (scope) hooks.push(...scope.hooks);

    const sink =
      (own?.isCurrentBound(HookErrorSink) ? own.getAll<HookErrorSink>(HookErrorSink).at(-1) : undefined) ??
      this.container.getAll<HookErrorSink>(HookErrorSink).at(-1) ??
      stderrHookErrorSink;

    return {
      provider,
      toolset,
      hooks,
      onHookError: (report) => sink.report(report),
      defaults: this.#options,
      lease: () => (scope ? scope.leases.lease() : this.#leases.lease()),
    };
  }

  #providerByName(name: string): ChatProvider {
    this.#checkProvider(name);
    return this.container.get<ChatProvider>(ChatProvider, { name });
  }

  #checkProvider(name: string): void {
    if (this.#providerOwner(name) === undefined) throw new UnknownProviderError(name, this.providers());
  }

  #providerOwner(name: string): string | undefined {
    for (const used of this.#used.values()) if (used.providers.includes(name)) return used.plugin.name;
    return undefined;
  }

  #defaultProvider(): string | undefined {
    const values = [...this.#used.values()];
    return (values.find((u) => u.claimedDefault) ?? values.find((u) => u.providers.length > 0))?.providers[0];
  }

  #checkOpen(): void {
    if (this.#disposed) throw new KernelError('The kernel is disposed');
  }
}

async function runDisposers(used: UsedPlugin, errors: unknown[]): Promise<void> {
  for (const dispose of used.disposers.reverse()) {
    try {
      await dispose();
    } catch (error) {
      errors.push(new PluginError(used.plugin.name, 'dispose-failed', `dispose failed: ${describe(error)}`, { cause: error }));
    }
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
