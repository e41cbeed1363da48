import type { BindWhenOnFluentSyntax, ContainerModuleLoadOptions, ResolutionContext, ServiceIdentifier } from 'inversify';
import { ChatProvider } from '../provider/chat-provider.js';
import { StepHooks } from '../runtime/hooks/step-hooks.js';
import { Toolset } from '../tooling/toolset.js';
import { recordBindings, serviceName } from './binding-recorder.js';
import type { ModuleDeactivations } from './disposal.js';
import { serviceName as describeIdentifier } from './class-metadata.js';
import { Contribution, contributionSource, type ContributionKind, type ServiceClass } from './contribution.js';
import { errorMessage, PluginError } from './errors.js';
import { ApprovalHandler } from './approval-handler.js';
import { ExtensionPoint } from './extension-point.js';
import { HookErrorSink } from './hook-error-sink.js';
import { KernelOptions } from './kernel-options.js';
import { StepRunner } from './step-runner.js';
import { TenantId } from './tenant-id.js';
import type { PluginContext, ProviderBindingOptions, ServiceBindingOptions } from './plugin.js';
import type { PluginRecord } from './plugin-record.js';
import type { ScopedServices } from './scoped-services.js';
import type { ServiceScope } from './service-scope.js';

/** What a plugin context needs of its kernel. @internal */
export interface PluginHost {
  /** The plugins used, or being used, by name. */
  readonly records: ReadonlyMap<string, PluginRecord>;
  /** The plugin each hooks object (or instance) belongs to. */
  readonly hookOwners: WeakMap<object, string>;
  readonly services: ScopedServices;
  /** Where the plugins' module deactivation handlers are tracked (the kernel awaits them). */
  readonly deactivations: ModuleDeactivations;
  /** The toolset a step of `scope` uses. */
  toolsetFor(scope: ServiceScope): Toolset;
  /** The contributions to an extension point, as the scope of `tenant` (or the kernel's) has them. */
  contributionsTo(id: symbol | string, tenant: string | undefined): readonly object[];
}

/** The identifiers the kernel binds itself or has helpers for: no extension point of a plugin's. */
const KERNEL_IDENTIFIERS: ReadonlyMap<ServiceIdentifier, string> = new Map<ServiceIdentifier, string>([
  [ChatProvider, 'bindChatProvider'],
  [Toolset, 'bindToolset'],
  [StepHooks, 'bindHooks'],
  [HookErrorSink, 'bindHookErrorSink'],
  [ApprovalHandler, 'bindApprovalHandler'],
  [ExtensionPoint, 'defineExtensionPoint'],
  [TenantId, 'tenants.define'],
  [StepRunner, 'kernel.runner'],
  [KernelOptions, 'new Kernel(options)'],
]);

/**
 * The context a plugin's `setup` runs with. Objects are bound as constants; factories and classes
 * behind dynamic bindings that ask the kernel for the value of the scope they are resolved in (a
 * class is created under its own private token, see {@link ScopedServices}). @internal
 */
export function createPluginContext(record: PluginRecord, options: ContainerModuleLoadOptions, host: PluginHost): PluginContext {
  const name = record.name;

  const contribute = <T extends object>(
    kind: ContributionKind,
    id: ServiceIdentifier,
    input: T | ServiceClass<T> | (() => T),
    bindingOptions: ServiceBindingOptions = {},
    providerName?: string,
  ): Contribution<T> => {
    const what = kind === 'contribution' ? `contribution to ${describeIdentifier(id)}` : providerName === undefined ? kind : `${kind} "${providerName}"`;
    const source = contributionSource(name, what, input, kind === 'chat provider');
    const tenantOnly = bindingOptions.tenantOnly === true;
    const scope: unknown = bindingOptions.scope;
    if (scope !== undefined && scope !== 'shared' && scope !== 'tenant') throw new PluginError(name, 'invalid', `${what}: scope must be 'shared' or 'tenant', not ${String(scope)}`);
    if (tenantOnly && scope === 'shared') throw new PluginError(name, 'invalid', `${what}: a tenant-only service is created per tenant: it cannot be declared { scope: 'shared' }`);
    if (tenantOnly && source.type !== 'class') throw new PluginError(name, 'invalid', `${what}: only a class can be tenant-only (an object or a factory is the same for every tenant)`);
    if (scope === 'tenant' && source.type !== 'class') throw new PluginError(name, 'invalid', `${what}: only a class can be per tenant (an object or a factory is the same for every tenant)`);
    const contribution = new Contribution<T>(name, kind, id, source, tenantOnly ? 'tenant' : scope, providerName, tenantOnly);
    const type = contribution.class;
    if (type) {
      try {
        contribution.rootBinding = options.bind(contribution.token).to(type).getIdentifier();
      } catch (error) {
        // inversify refuses a class whose constructor parameters it cannot see (no decorators, no metadata).
        throw new PluginError(name, 'not-injectable', `${contribution.describe()}: ${errorMessage(error)}`, { cause: error });
      }
    }
    record.contributions.push(contribution);
    return contribution;
  };

  /**
   * Binds `id` to the contribution: a constant for an object, else its value in the resolving scope
   * (for `optional` ones, nothing — an empty object the kernel leaves out — where it is tenant-only).
   */
  const bindTo = <T extends object>(id: ServiceIdentifier<T>, contribution: Contribution<T>, optional: boolean): BindWhenOnFluentSyntax<T> => {
    const binding = options.bind<T>(id);
    const source = contribution.source;
    if (source.type === 'object') return binding.toConstantValue(source.value);
    const { services } = host;
    return binding.toDynamicValue((context: ResolutionContext) =>
      optional ? services.valueOrAbsentIn(contribution, services.scopeOf(context)) : services.valueIn(contribution, services.scopeOf(context)),
    );
  };

  return {
    ...recordBindings(
      options,
      (binding) => record.bindings.push(binding),
      (id, handler) => host.deactivations.wrap({ plugin: name, tenant: undefined, service: serviceName(id), hook: 'onDeactivation' }, handler),
      (id, target) => {
        const targets = record.rawTargets.get(id);
        if (targets) targets.push(target);
        else record.rawTargets.set(id, [target]);
      },
    ),
    plugin: name,
    bindChatProvider: (providerName, provider, bindingOptions: ProviderBindingOptions = {}) => {
      if (typeof providerName !== 'string' || providerName === '') throw new PluginError(name, 'invalid', 'a provider needs a non-empty name');
      const owner = [...host.records.values()].find((r) => r.providerNames().includes(providerName));
      if (owner) throw new PluginError(name, 'conflict', `chat provider "${providerName}" is already registered by plugin "${owner.name}"`);
      if (bindingOptions.default) {
        const claimed = [...host.records.values()].find((r) => r.claimedDefault);
        if (claimed) throw new PluginError(name, 'conflict', `plugin "${claimed.name}" already registered the default provider`);
      }
      const contribution = contribute<ChatProvider>('chat provider', ChatProvider, provider, bindingOptions, providerName);
      bindTo(ChatProvider, contribution, false).whenNamed(providerName);
      if (bindingOptions.default) {
        record.claimedDefault = true;
        record.providers.unshift(contribution);
      } else record.providers.push(contribution);
    },
    bindToolset: (toolset, bindingOptions) => {
      const owner = [...host.records.values()].find((r) => r.toolset);
      if (owner) throw new PluginError(name, 'conflict', `plugin "${owner.name}" already bound the global toolset (combine them into one)`);
      const contribution = contribute<Toolset>('toolset', Toolset, toolset, bindingOptions);
      // What `Toolset` is differs between tenants (their own toolsets).
      options.bind(Toolset).toDynamicValue((context) => {
        host.services.perTenant('Toolset');
        return host.toolsetFor(host.services.scopeOf(context));
      });
      record.toolset = contribution;
    },
    bindHooks: (hooks, bindingOptions) => {
      if (typeof hooks === 'object' && hooks !== null) {
        const owner = host.hookOwners.get(hooks);
        if (owner !== undefined && owner !== name && host.records.has(owner)) {
          throw new PluginError(name, 'conflict', `this hooks object is already bound by plugin "${owner}"; give each plugin its own`);
        }
        host.hookOwners.set(hooks, name);
      }
      bindTo(StepHooks, contribute<StepHooks>('hooks', StepHooks, hooks, bindingOptions), true);
    },
    bindHookErrorSink: (sink, bindingOptions) => {
      bindTo(HookErrorSink, contribute<HookErrorSink>('hook-error sink', HookErrorSink, sink, bindingOptions), true);
    },
    bindApprovalHandler: (handler, bindingOptions) => {
      bindTo(ApprovalHandler, contribute<ApprovalHandler>('approval handler', ApprovalHandler, handler, bindingOptions), true);
    },
    defineExtensionPoint: <T extends object>(id: symbol | string): ExtensionPoint<T> => {
      checkExtensionPointId(name, id);
      const owner = extensionPointOwner(host, id);
      if (owner !== undefined) throw new PluginError(name, 'conflict', `extension point ${describeIdentifier(id)} is already opened by plugin "${owner}"`);
      record.extensionPoints.push(id);
      const point: ExtensionPoint<T> = Object.freeze({ id, plugin: name, contributions: (tenant?: string) => host.contributionsTo(id, tenant) as readonly T[] });
      options.bind(ExtensionPoint).toConstantValue(point).whenNamed(id);
      return point;
    },
    contribute: (id, contribution, bindingOptions) => {
      checkExtensionPointId(name, id);
      if (extensionPointOwner(host, id) === undefined) {
        throw new PluginError(name, 'missing-requirement', `contributes to extension point ${describeIdentifier(id)}, which no plugin used before it opened (use the plugin that opens it first, or name it in \`requires\`)`);
      }
      bindTo(id, contribute('contribution', id, contribution, bindingOptions), true);
    },
    onDispose: (dispose) => {
      record.disposers.push(dispose);
    },
  };
}

/** Refuses what cannot be an extension point's id: anything but a symbol or a non-empty string, and the kernel's own identifiers. */
function checkExtensionPointId(plugin: string, id: unknown): void {
  if (typeof id !== 'symbol' && (typeof id !== 'string' || id === '')) throw new PluginError(plugin, 'invalid', `an extension point's id must be a symbol or a non-empty string, not ${String(id)}`);
  const helper = KERNEL_IDENTIFIERS.get(id);
  if (helper !== undefined) throw new PluginError(plugin, 'invalid', `${describeIdentifier(id)} is the kernel's own (use ${helper})`);
}

/** The plugin that opened the extension point `id`, among those used or being used. */
function extensionPointOwner(host: PluginHost, id: symbol | string): string | undefined {
  for (const record of host.records.values()) if (record.extensionPoints.includes(id)) return record.name;
  return undefined;
}
