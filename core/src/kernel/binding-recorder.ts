import type { BindingIdentifier, BindToFluentSyntax, BoundServiceSyntax, ContainerModuleLoadOptions, ServiceIdentifier } from 'inversify';

/**
 * The module API of a plugin or a tenant, with every binding it makes recorded, so that the kernel
 * can deactivate them one by one, in reverse order, each awaited and each failure caught (inversify's
 * `unbindAllAsync` stops at the first failing `@preDestroy`).
 */
export function recordBindings(options: ContainerModuleLoadOptions, record: (binding: BindingIdentifier) => void): ContainerModuleLoadOptions {
  const recorded = <T>(syntax: BindToFluentSyntax<T>): BindToFluentSyntax<T> => {
    const track = <S extends BoundServiceSyntax>(bound: S): S => {
      record(bound.getIdentifier());
      return bound;
    };
    return {
      to: (type) => track(syntax.to(type)),
      toSelf: () => track(syntax.toSelf()),
      toConstantValue: (value) => track(syntax.toConstantValue(value)),
      toDynamicValue: (builder) => track(syntax.toDynamicValue(builder)),
      toFactory: (factory) => track(syntax.toFactory(factory)),
      toResolvedValue: ((factory: () => T, injectOptions?: never) =>
        track(injectOptions === undefined ? syntax.toResolvedValue(factory) : syntax.toResolvedValue(factory, injectOptions))) as BindToFluentSyntax<T>['toResolvedValue'],
      // An alias holds no instance of its own: nothing to deactivate.
      toService: (service) => syntax.toService(service),
    };
  };
  return {
    ...options,
    bind: <T>(id: ServiceIdentifier<T>) => recorded(options.bind<T>(id)),
    rebind: <T>(id: ServiceIdentifier<T>) => recorded(options.rebind<T>(id)),
    rebindAsync: async <T>(id: ServiceIdentifier<T>) => recorded(await options.rebindAsync<T>(id)),
  };
}
