import type { BindingDeactivation, BindingIdentifier, BindToFluentSyntax, BoundServiceSyntax, Container, ContainerModuleLoadOptions, Newable, ServiceIdentifier } from 'inversify';

/** One binding a plugin or a tenant module made, and how the kernel takes it back. */
export interface RecordedBinding {
  readonly binding: BindingIdentifier;
  /** Its service identifier, for reports (`Symbol(Db)`, a class's name). */
  readonly service: string;
  /**
   * For a constant: its binding's deactivation handler, applied to the constant by the kernel
   * itself (inversify runs it only for a constant that was resolved at least once).
   */
  deactivate?: (() => void | Promise<void>) | undefined;
}

/**
 * What a raw binding of an identifier leads to, as far as the kernel can see without resolving it: a
 * class (`to`, `toSelf`) or another identifier (`toService`). Constants, dynamic values and factories
 * are not followed.
 */
export type RawTarget = { readonly class: Newable } | { readonly alias: ServiceIdentifier };

/**
 * The module API of a plugin or a tenant, with every binding it makes recorded, so that the kernel
 * can deactivate them one by one, in reverse order, each awaited and each failure caught (inversify's
 * `unbindAllAsync` stops at the first failing `@preDestroy`). A constant's `onDeactivation` is kept by
 * the kernel: it runs when the binding is taken back, whether or not anything resolved the constant
 * (a connection bound as a constant is closed even if no service used it).
 */
export function recordBindings(
  options: ContainerModuleLoadOptions,
  record: (binding: RecordedBinding) => void,
  /**
   * What to give inversify for a module's `onDeactivation(id, handler)` (the kernel awaits such
   * handlers itself: inversify does not); by default the handler itself.
   */
  moduleDeactivation: <T>(id: ServiceIdentifier<T>, handler: (value: T) => unknown) => (value: T) => void | Promise<void> = (_, handler) =>
    handler as (value: unknown) => void,
  /** Told what a binding of `id` to a class or to another identifier leads to (see {@link RawTarget}). */
  target: (id: ServiceIdentifier, target: RawTarget) => void = () => undefined,
): ContainerModuleLoadOptions {
  const recorded = <T>(id: ServiceIdentifier<T>, syntax: BindToFluentSyntax<T>): BindToFluentSyntax<T> => {
    const service = serviceName(id);
    const track = <S extends BoundServiceSyntax>(bound: S): S => {
      record({ binding: bound.getIdentifier(), service });
      return bound;
    };
    return {
      to: (type) => {
        target(id, { class: type });
        return track(syntax.to(type));
      },
      toSelf: () => {
        if (typeof id === 'function') target(id, { class: id as Newable });
        return track(syntax.toSelf());
      },
      toConstantValue: (value) => {
        const bound = syntax.toConstantValue(value);
        const entry: RecordedBinding = { binding: bound.getIdentifier(), service };
        record(entry);
        return keepingDeactivation(bound, (deactivation: BindingDeactivation<T>) => {
          entry.deactivate = () => deactivation(value);
        });
      },
      toDynamicValue: (builder) => track(syntax.toDynamicValue(builder)),
      toFactory: (factory) => track(syntax.toFactory(factory)),
      toResolvedValue: ((factory: () => T, injectOptions?: never) =>
        track(injectOptions === undefined ? syntax.toResolvedValue(factory) : syntax.toResolvedValue(factory, injectOptions))) as BindToFluentSyntax<T>['toResolvedValue'],
      // An alias holds no instance of its own: nothing to deactivate.
      toService: (service) => {
        target(id, { alias: service });
        syntax.toService(service);
      },
    };
  };
  return {
    ...options,
    bind: <T>(id: ServiceIdentifier<T>) => recorded(id, options.bind<T>(id)),
    rebind: <T>(id: ServiceIdentifier<T>) => recorded(id, options.rebind<T>(id)),
    rebindAsync: async <T>(id: ServiceIdentifier<T>) => recorded(id, await options.rebindAsync<T>(id)),
    onDeactivation: <T>(id: ServiceIdentifier<T>, handler: (value: T) => void | Promise<void>) => options.onDeactivation<T>(id, moduleDeactivation(id, handler)),
  };
}

/** A service identifier as reports name it: `Symbol(Db)`, `Db` for a class, the string itself. */
export function serviceName(id: ServiceIdentifier): string {
  return typeof id === 'function' ? id.name : String(id);
}

/** Takes a recorded binding back: its constant's deactivation (if any), then the binding, awaited. */
export async function unbindRecorded(container: Container, recorded: RecordedBinding): Promise<void> {
  if (recorded.deactivate) {
    const deactivate = recorded.deactivate;
    recorded.deactivate = undefined; // once, even if it fails
    await deactivate();
  }
  await container.unbindAsync(recorded.binding);
}

/**
 * A constant's fluent syntax (at any point of its chain) whose `onDeactivation` hands the handler
 * to `keep` instead of inversify (which gets a no-op, so the chain goes on as usual).
 */
function keepingDeactivation<S extends object, T>(syntax: S, keep: (deactivation: BindingDeactivation<T>) => void): S {
  return new Proxy(syntax, {
    get(target, property) {
      const member: unknown = Reflect.get(target, property, target);
      if (typeof member !== 'function') return member;
      return (...args: unknown[]): unknown => {
        if (property === 'onDeactivation') {
          keep(args[0] as BindingDeactivation<T>);
          args = [() => undefined];
        }
        const result: unknown = (member as (...a: unknown[]) => unknown).apply(target, args);
        return typeof result === 'object' && result !== null ? keepingDeactivation(result, keep) : result;
      };
    },
  });
}
