import type { BindWhenOnFluentSyntax, ContainerModuleLoadOptions, ResolutionContext, ServiceIdentifier } from 'inversify';
import { ChatProvider } from '../provider/chat-provider.js';
import { StepHooks } from '../runtime/hooks/step-hooks.js';
import { Toolset } from '../tooling/toolset.js';
import { recordBindings, serviceName } from './binding-recorder.js';
import type { ModuleDeactivations } from './disposal.js';
import { Contribution, contributionSource, type ContributionKind, type ServiceClass } from './contribution.js';
import { errorMessage, PluginError } from './errors.js';
import { ApprovalHandler } from './approval-handler.js';
import { HookErrorSink } from './hook-error-sink.js';
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
}

/**
 * The context a plugin's `setup` runs with. Objects are bound as constants; factories and classes
 * behind dynamic bindings that ask the kernel for the value of the scope they are resolved in (a
 * class is created under its own private token, see {@link ScopedServices}). @internal
 */
export function createPluginContext(record: PluginRecord, options: ContainerModuleLoadOptions, host: PluginHost): PluginContext {
  const name = record.name;

  const contribute = <T extends object>(
    kind: ContributionKind,
    input: T | ServiceClass<T> | (() => T),
    bindingOptions: ServiceBindingOptions = {},
    providerName?: string,
  ): Contribution<T> => {
    const what = providerName === undefined ? kind : `${kind} "${providerName}"`;
    const source = contributionSource(name, what, input, kind === 'chat provider');
    const tenantOnly = bindingOptions.tenantOnly === true;
    if (tenantOnly && source.type !== 'class') throw new PluginError(name, 'invalid', `${what}: only a class can be tenant-only (an object or a factory is the same for every tenant)`);
    const contribution = new Contribution<T>(name, kind, source, providerName, tenantOnly);
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
      const contribution = contribute<ChatProvider>('chat provider', provider, bindingOptions, providerName);
      bindTo(ChatProvider, contribution, false).whenNamed(providerName);
      if (bindingOptions.default) {
        record.claimedDefault = true;
        record.providers.unshift(contribution);
      } else record.providers.push(contribution);
    },
    bindToolset: (toolset, bindingOptions) => {
      const owner = [...host.records.values()].find((r) => r.toolset);
      if (owner) throw new PluginError(name, 'conflict', `plugin "${owner.name}" already bound the global toolset (combine them into one)`);
      const contribution = contribute<Toolset>('toolset', toolset, bindingOptions);
      // What `Toolset` is differs between tenants (their own toolsets): a scope-dependent binding.
      options.bind(Toolset).toDynamicValue((context) => {
        host.services.touch();
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
      bindTo(StepHooks, contribute<StepHooks>('hooks', hooks, bindingOptions), true);
    },
    bindHookErrorSink: (sink, bindingOptions) => {
      bindTo(HookErrorSink, contribute<HookErrorSink>('hook-error sink', sink, bindingOptions), true);
    },
    bindApprovalHandler: (handler, bindingOptions) => {
      bindTo(ApprovalHandler, contribute<ApprovalHandler>('approval handler', handler, bindingOptions), true);
    },
    onDispose: (dispose) => {
      record.disposers.push(dispose);
    },
  };
}
