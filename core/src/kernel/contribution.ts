import type { BindingIdentifier, Newable, ServiceIdentifier } from 'inversify';
import { isClass, isInjectable, serviceName } from './class-metadata.js';
import { PluginError } from './errors.js';

/** A class whose instances the container creates, injecting what its constructor and properties ask for. */
export type ServiceClass<T> = Newable<T>;

/** The extension points a plugin contributes to: the kernel's, or (`contribution`) one a plugin opened. */
export type ContributionKind = 'chat provider' | 'toolset' | 'hooks' | 'hook-error sink' | 'approval handler' | 'contribution';

/**
 * Where a contribution is created, decided when its plugin is used (see {@link ScopedServices}):
 *
 * - `shared`: once, in the kernel's scope, for every scope (objects, factories' values, classes
 *   declared `{ scope: 'shared' }`);
 * - `tenant`: once per scope, the kernel's and each tenant's (declared `{ scope: 'tenant' }`, or
 *   undeclared and injecting something that differs per tenant);
 * - `tenant-only`: once per tenant, never in the kernel's scope (`{ tenantOnly: true }`);
 * - `container`: once per container, the kernel's (which tenants without bindings of their own
 *   share) and each tenant's own (undeclared classes that inject nothing that differs per tenant).
 *
 * @internal
 */
export type Lifetime = 'shared' | 'tenant' | 'tenant-only' | 'container';

/** What a plugin gave for an extension point: a ready object, a factory, or an `@injectable` class. */
export type ContributionSource<T> =
  | { readonly type: 'object'; readonly value: T }
  | { readonly type: 'factory'; readonly create: () => T }
  | { readonly type: 'class'; readonly class: ServiceClass<T> };

/**
 * One thing a plugin contributed with a `bind…` helper. A class-bound contribution is resolved once
 * per scope (see {@link ScopedServices}) under its own private token. @internal
 */
export class Contribution<T extends object = object> {
  /** The private service identifier a class-bound contribution is bound to, in every scope. */
  readonly token: symbol;
  /** Its binding in the kernel's container (class-bound contributions). */
  rootBinding: BindingIdentifier | undefined;
  /**
   * Where it is created: set here for objects, factories and declared classes; for an undeclared
   * class, when its plugin is used (from what the class declares it injects), before it is created.
   */
  lifetime: Lifetime | undefined;
  /** A factory's value, once it was called. */
  created: T | undefined;

  constructor(
    /** The plugin that contributed it. */
    readonly plugin: string,
    readonly kind: ContributionKind,
    /** The service identifier it is bound to (`ChatProvider`, `StepHooks`, an extension point's id, …). */
    readonly id: ServiceIdentifier,
    readonly source: ContributionSource<T>,
    /** The scope its plugin declared for it, if any (`tenantOnly` counts as `tenant`). */
    readonly declared: ContributionScope | undefined,
    /** The provider name, for a chat provider. */
    readonly name?: string,
    /** Created for tenants only, never in the kernel's scope. */
    readonly tenantOnly = false,
  ) {
    this.token = Symbol(`kosong: ${this.describe()} of plugin "${plugin}"`);
    this.lifetime = source.type !== 'class' ? 'shared' : tenantOnly ? 'tenant-only' : declared;
  }

  /** Whether it is created per tenant (it then differs between tenants). Known once {@link lifetime} is. */
  get perTenant(): boolean {
    return this.lifetime === 'tenant' || this.lifetime === 'tenant-only';
  }

  /** The class, if the contribution is class-bound. */
  get class(): ServiceClass<T> | undefined {
    return this.source.type === 'class' ? this.source.class : undefined;
  }

  /** How errors name it, e.g. `chat provider "openai" (TenantOpenAI)`, `hooks UsageMeter`, `contribution to Symbol(Formats) JsonFormat`. */
  describe(): string {
    const what = this.kind === 'contribution' ? `contribution to ${serviceName(this.id)}` : this.name === undefined ? this.kind : `${this.kind} "${this.name}"`;
    if (this.source.type === 'class') return this.name === undefined ? `${what} ${this.source.class.name}` : `${what} (${this.source.class.name})`;
    return this.source.type === 'factory' ? `${what} (factory)` : what;
  }
}

/** The scope a plugin declares for a class it binds with a helper (see `ServiceBindingOptions.scope`). */
export type ContributionScope = 'shared' | 'tenant';

/**
 * Classifies what a plugin passed to a `bind…` helper. A class must be `@injectable()` (inversify
 * would resolve a class with decorated constructor parameters without it, so the kernel checks).
 * A function that is not a class is a factory where `allowFactory`, an error elsewhere.
 *
 * @throws {PluginError} `not-injectable` for a class without `@injectable()`, `invalid` for anything
 * that is neither an object, nor a class, nor an allowed factory.
 */
export function contributionSource<T extends object>(
  plugin: string,
  what: string,
  input: T | ServiceClass<T> | (() => T),
  allowFactory: boolean,
): ContributionSource<T> {
  if (typeof input === 'function') {
    const fn = input as (...args: never[]) => unknown;
    if (isClass(fn)) {
      if (!isInjectable(fn as unknown as Newable)) {
        throw new PluginError(plugin, 'not-injectable', `${what} ${fn.name || '(anonymous class)'} is a class without @injectable(); decorate it so the container can create it`);
      }
      return { type: 'class', class: input as ServiceClass<T> };
    }
    if (allowFactory) return { type: 'factory', create: input as () => T };
    throw new PluginError(plugin, 'invalid', `${what} must be an object or an @injectable() class, not a function`);
  }
  if (typeof input !== 'object' || input === null) throw new PluginError(plugin, 'invalid', `${what} must be an object or an @injectable() class, not ${String(input)}`);
  return { type: 'object', value: input };
}
