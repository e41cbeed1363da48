/**
 * What the kernel reads of inversify's class metadata: whether a class is `@injectable()`, which
 * service identifiers it injects (to name the whole chain when a dependency is missing or circular,
 * and to know, when a plugin is used, whether a class depends on something that differs per
 * tenant), and its `@preDestroy()` methods (the kernel calls them itself, once, in its own order).
 *
 * Inversify 8 keeps both under reflect-metadata keys it does not export; they are read here and only
 * here. If a later inversify renames them, the kernel tests on missing `@injectable` and on the
 * dependency chain fail.
 *
 * @module
 */
import type { MetadataName, Newable, ServiceIdentifier } from 'inversify';

const INJECTABLE_FLAG_KEY = '@inversifyjs/core/classIsInjectableFlagReflectKey';
const CLASS_METADATA_KEY = '@inversifyjs/core/classMetadataReflectKey';

/** How deep {@link dependencyPath} searches. */
const MAX_DEPTH = 12;

interface ElementMetadata {
  readonly value?: unknown;
  readonly name?: MetadataName | undefined;
}

/** One service a class injects: its identifier, and the name it asks for (`@named`), if any. */
export interface InjectedService {
  readonly id: ServiceIdentifier;
  readonly name: MetadataName | undefined;
}

interface ClassMetadata {
  readonly constructorArguments?: readonly (ElementMetadata | undefined)[];
  readonly properties?: ReadonlyMap<string | symbol, ElementMetadata>;
  readonly lifecycle?: { readonly preDestroyMethodNames?: ReadonlySet<string | symbol> };
}

/** Whether `type` itself (not a base class) is decorated with `@injectable()`. */
export function isInjectable(type: Newable): boolean {
  return Reflect.getOwnMetadata(INJECTABLE_FLAG_KEY, type) === true;
}

/**
 * Whether a function is a class rather than a factory: it is `@injectable()`, or its source is a
 * `class` declaration.
 */
export function isClass(fn: (...args: never[]) => unknown): boolean {
  return isInjectable(fn as unknown as Newable) || /^class[\s{]/.test(Function.prototype.toString.call(fn));
}

/** The service identifiers a class injects (constructor arguments, then properties). */
export function injectedIdentifiers(type: Newable): ServiceIdentifier[] {
  return injectedServices(type).map((service) => service.id);
}

/** The services a class injects (constructor arguments, then properties; a lazy identifier unwrapped). */
export function injectedServices(type: Newable): InjectedService[] {
  const metadata = Reflect.getOwnMetadata(CLASS_METADATA_KEY, type) as ClassMetadata | undefined;
  if (!metadata) return [];
  const elements = [...(metadata.constructorArguments ?? []), ...(metadata.properties?.values() ?? [])];
  return elements.flatMap((element) => {
    const id = unwrapped(element?.value);
    return isServiceIdentifier(id) ? [{ id, name: element?.name }] : [];
  });
}

/** The identifier a `LazyServiceIdentifier` stands for (anything else as it is). */
function unwrapped(value: unknown): unknown {
  const lazy = value as { unwrap?: unknown } | undefined;
  if (typeof lazy !== 'object' || lazy === null || typeof lazy.unwrap !== 'function') return value;
  try {
    return (lazy.unwrap as () => unknown).call(lazy);
  } catch {
    return undefined;
  }
}

/** The names of the methods of a class decorated with `@preDestroy()`. */
export function preDestroyMethods(type: Newable): (string | symbol)[] {
  const metadata = Reflect.getOwnMetadata(CLASS_METADATA_KEY, type) as ClassMetadata | undefined;
  return [...(metadata?.lifecycle?.preDestroyMethodNames ?? [])];
}

/**
 * The names of the services from `from` (excluded) to the first one named `target` (included),
 * following the identifiers classes inject; `undefined` if no path is found. Identifiers that are not
 * classes end a path: what they are bound to is the container's business.
 */
export function dependencyPath(from: Newable, target: string): string[] | undefined {
  const visiting = new Set<Newable>();
  const search = (type: Newable, depth: number): string[] | undefined => {
    if (depth > MAX_DEPTH || visiting.has(type)) return undefined;
    visiting.add(type);
    try {
      for (const id of injectedIdentifiers(type)) {
        const name = serviceName(id);
        if (name === target) return [name];
        if (typeof id === 'function') {
          const rest = search(id as Newable, depth + 1);
          if (rest) return [name, ...rest];
        }
      }
      return undefined;
    } finally {
      visiting.delete(type);
    }
  };
  return search(from, 0);
}

/** A service identifier as inversify names it in its messages: a class by its name, a symbol as `Symbol(…)`. */
export function serviceName(id: unknown): string {
  if (typeof id === 'function') return (id as { name?: string }).name || '(anonymous class)';
  return String(id);
}

function isServiceIdentifier(value: unknown): value is ServiceIdentifier {
  return typeof value === 'string' || typeof value === 'symbol' || typeof value === 'function';
}
