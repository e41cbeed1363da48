import type { ContainerModuleLoadOptions } from 'inversify';
import type { ChatProvider } from '../provider/chat-provider.js';
import type { StepHooks } from '../runtime/hooks/step-hooks.js';
import type { Toolset } from '../tooling/toolset.js';
import type { ApprovalHandler } from './approval-handler.js';
import type { ContributionScope, ServiceClass } from './contribution.js';
import { PluginError } from './errors.js';
import type { ExtensionPoint } from './extension-point.js';
import type { HookErrorSink } from './hook-error-sink.js';

/** Options of {@link PluginContext.bindChatProvider}. */
export interface ProviderBindingOptions extends ServiceBindingOptions {
  /** Make this the provider runners use when they name none. At most one provider may claim it. */
  readonly default?: boolean;
}

/** Options of the `bind…` helpers (and `contribute`) of a {@link PluginContext}. */
export interface ServiceBindingOptions {
  /**
   * For a class: how many instances the kernel creates, declared when it is bound (an object, or a
   * provider factory's value, is one for every scope: `'shared'`, the only scope it may declare).
   *
   * - `'shared'`: one, created in the kernel's scope from the kernel's bindings and handed to every
   *   tenant; it never sees a tenant's bindings. Injecting anything that differs per tenant —
   *   `TenantId`, `StepRunner`, `Toolset`, the default `ChatProvider`, a service created per tenant
   *   (directly or through the classes it injects) — is a {@link PluginError} (`scope-mismatch`)
   *   naming both, when the plugin is used (or, through a binding the kernel cannot see into, when
   *   it is first created).
   * - `'tenant'`: one per scope — the kernel's (steps without a tenant) and each tenant's — created
   *   with that scope's dependencies (its `TenantId`, `StepRunner`, toolset, bindings).
   * - not given (how plugins were written before scopes were declared): decided when the plugin is
   *   used, from what the class declares it injects — `'tenant'` if it injects, itself or through a
   *   class it injects, anything that differs per tenant; else one in the kernel's scope, shared by
   *   the tenants without bindings of their own, and one in each tenant with bindings of its own
   *   (`module`, `modules`), created with them. Resolving something per tenant through a binding the
   *   kernel cannot see into (a `toDynamicValue`) is then a `scope-mismatch` error too: declare it.
   */
  readonly scope?: ContributionScope;
  /**
   * For a class: create it for tenants only, never in the kernel's scope — for a service whose
   * dependencies only tenants bind (each tenant's API key), so that the kernel needs no global one.
   * It is checked in every tenant when it is defined (and in the tenants already defined when the
   * plugin is used) instead of in the kernel's scope. Steps without a tenant leave such hooks and
   * sinks out, and fail with a {@link PluginError} if they need such a provider or toolset. Its scope
   * is `'tenant'` (declaring `'shared'` with it is refused).
   */
  readonly tenantOnly?: boolean;
}

/**
 * What a plugin's `setup` gets: one-line helpers for the kernel's extension points, plus the raw
 * inversify module API (`bind`, `isBound`, `onActivation`, `onDeactivation`, …) for anything else.
 * Everything bound here is removed again if the plugin (or another in the same `use` call) fails.
 *
 * Each helper takes a ready object or an `@injectable()` class. A class is created by the container,
 * with its dependencies injected, once per scope or once for all as its binding declares
 * ({@link ServiceBindingOptions.scope}; see the kernel's README: "Writing a plugin"); it is created
 * once right away in the kernel's scope, so a missing `@injectable()`, an unbound dependency, a
 * dependency cycle or a scope mismatch fails `kernel.use` with a {@link PluginError} naming this
 * plugin and the service chain. Its `@preDestroy` runs when the kernel
 * is disposed (or the tenant it was created for is removed).
 */
export interface PluginContext extends ContainerModuleLoadOptions {
  /** The plugin's name. */
  readonly plugin: string;
  /**
   * Registers a chat provider under `name`: an object, an `@injectable()` class, or a factory (called
   * once, on first use). The first provider registered is the default unless another says
   * `{ default: true }`.
   */
  bindChatProvider(name: string, provider: ChatProvider | ServiceClass<ChatProvider> | (() => ChatProvider), options?: ProviderBindingOptions): void;
  /** Sets the global toolset: the one steps use unless their tenant has its own. Only one plugin may. */
  bindToolset(toolset: Toolset | ServiceClass<Toolset>, options?: ServiceBindingOptions): void;
  /** Adds lifecycle hooks to every step; failures are reported under this plugin's name. */
  bindHooks(hooks: StepHooks | ServiceClass<StepHooks>, options?: ServiceBindingOptions): void;
  /** Replaces the hook-error sink (the last one bound wins). */
  bindHookErrorSink(sink: HookErrorSink | ServiceClass<HookErrorSink>, options?: ServiceBindingOptions): void;
  /** Sets the approval handler of steps that need one (the last one bound wins; a tenant's own wins for it). */
  bindApprovalHandler(handler: ApprovalHandler | ServiceClass<ApprovalHandler>, options?: ServiceBindingOptions): void;
  /**
   * Opens an extension point of this plugin under `id` (a symbol, or a string): other plugins — used
   * after this one, or in the same `use` call with this one in their `requires` — contribute to it
   * with {@link contribute}. The returned {@link ExtensionPoint} gives the contributions of a scope;
   * this plugin's classes inject the same object with `@inject(ExtensionPoint) @named(id)`.
   *
   * @throws {PluginError} `conflict` if a used plugin opened `id` already; `invalid` for one of the kernel's own identifiers.
   */
  defineExtensionPoint<T extends object>(id: symbol | string): ExtensionPoint<T>;
  /**
   * Contributes an object or an `@injectable()` class to an extension point a plugin opened with
   * {@link defineExtensionPoint} (the kernel's own have their helpers: `bindHooks`, …), with the same
   * options as the helpers.
   *
   * @throws {PluginError} `missing-requirement` if no plugin used before this one opened `id`.
   */
  contribute<T extends object>(id: symbol | string, contribution: T | ServiceClass<T>, options?: ServiceBindingOptions): void;
  /**
   * Runs when the kernel is disposed, or when this `use` call fails after setup (in reverse order,
   * after this plugin's services were deactivated). Awaited at most the kernel's
   * `deactivationTimeoutMs`; a failure is reported to the `HookErrorSink`, not thrown.
   */
  onDispose(dispose: () => void | Promise<void>): void;
}

/** A named unit that contributes bindings to a kernel. */
export interface Plugin {
  /** Unique within a kernel; used in every error and hook report about the plugin. */
  readonly name: string;
  /** Names of plugins that must be used before (or in the same `use` call as) this one. */
  readonly requires?: readonly string[];
  /** Contributes the plugin's bindings. May be async. */
  setup(context: PluginContext): void | Promise<void>;
}

/**
 * Defines a plugin, checking its shape early.
 *
 * @example
 * const timing = definePlugin({ name: 'timing', setup: (ctx) => ctx.bindHooks({ onStepEnd: (e) => record(e.durationMs) }) });
 */
export function definePlugin(plugin: Plugin): Plugin {
  const name: unknown = plugin?.name;
  if (typeof name !== 'string' || name.trim() === '') {
    throw new PluginError(String(name), 'invalid', 'a plugin needs a non-empty string name');
  }
  if (typeof plugin.setup !== 'function') throw new PluginError(name, 'invalid', '`setup` must be a function');
  const requires = plugin.requires ?? [];
  if (!Array.isArray(requires) || requires.some((r) => typeof r !== 'string')) {
    throw new PluginError(name, 'invalid', '`requires` must be a list of plugin names');
  }
  return Object.freeze({ name, requires: Object.freeze([...requires]), setup: plugin.setup.bind(plugin) });
}
