/**
 * Inversify, loaded when the kernel first needs it — a `Kernel` is created, a container module is
 * made, or a class is decorated — rather than when `@kosong/core` is imported: it is some 250 ES
 * modules, and a process that imports the package for the step runtime (or a CLI printing its help)
 * should not load them. `require` loads its ES module build (Node ≥ 20.19 requires ES modules), the
 * same instance `import 'inversify'` gives, so classes decorated with either work in the kernel.
 *
 * `Container` and `ContainerModule` stand in for inversify's: `new` on them makes inversify's own.
 * The decorators call inversify's with the same arguments.
 *
 * @module
 */
import { createRequire } from 'node:module';
import type * as Inversify from 'inversify';

let loaded: typeof Inversify | undefined;

/** Inversify itself (loaded on first use). */
export function inversify(): typeof Inversify {
  return (loaded ??= createRequire(import.meta.url)('inversify') as typeof Inversify);
}

/** A function that, called with `new`, constructs an instance of the class `of()` gives. */
function constructing<C extends abstract new (...args: never[]) => unknown>(of: () => C): C {
  return function (...args: never[]): unknown {
    const Class = of() as unknown as new (...args: never[]) => unknown;
    return new Class(...args);
  } as unknown as C;
}

/** A function calling inversify's `name` with the same arguments. */
function forwarding<K extends keyof typeof Inversify>(name: K): (typeof Inversify)[K] {
  return ((...args: unknown[]) => (inversify()[name] as (...args: unknown[]) => unknown)(...args)) as unknown as (typeof Inversify)[K];
}

export type Container = Inversify.Container;
/** Inversify's `Container` (`new Container(options)` makes one). */
export const Container: typeof Inversify.Container = constructing(() => inversify().Container);

export type ContainerModule = Inversify.ContainerModule;
/** Inversify's `ContainerModule` (`new ContainerModule(load)` makes one). */
export const ContainerModule: typeof Inversify.ContainerModule = constructing(() => inversify().ContainerModule);

export const inject = forwarding('inject');
export const injectable = forwarding('injectable');
export const injectFromBase = forwarding('injectFromBase');
export const multiInject = forwarding('multiInject');
export const named = forwarding('named');
export const optional = forwarding('optional');
export const postConstruct = forwarding('postConstruct');
export const preDestroy = forwarding('preDestroy');
export const tagged = forwarding('tagged');
export const unmanaged = forwarding('unmanaged');
