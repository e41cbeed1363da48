import type { MetadataName, Newable, ServiceIdentifier } from 'inversify';
import type { RawTarget } from './binding-recorder.js';
import { injectedServices, serviceName } from './class-metadata.js';
import type { Contribution, Lifetime } from './contribution.js';
import { PluginError } from './errors.js';

/** What the kernel has bound, as {@link LifetimePlanner} reads it. @internal */
export interface BindingGraph {
  /**
   * How errors name what the kernel itself binds `id` (asked for `name`d) to, when that differs per
   * tenant — `TenantId`, `StepRunner`, `Toolset`, the default `ChatProvider` — else `undefined`.
   */
  perTenantService(id: ServiceIdentifier, name: MetadataName | undefined): string | undefined;
  /** The helper-bound contributions `id` (asked for `name`d) resolves to, of every plugin used or being used. */
  contributions(id: ServiceIdentifier, name: MetadataName | undefined): Iterable<Contribution>;
  /** What plugins bound `id` to with the raw module API: classes and aliases. */
  rawTargets(id: ServiceIdentifier): Iterable<RawTarget>;
}

/** Something that differs per tenant, found from a class. @internal */
export interface PerTenantDependency {
  /** The services from the class (excluded) to it (included), as errors name them. */
  readonly chain: readonly string[];
  /** Why it differs: `differs per tenant`, `is created per tenant (plugin "x")`. */
  readonly why: string;
}

/** How deep the search for a per-tenant dependency goes. */
const MAX_DEPTH = 12;

/**
 * Decides, when a plugin is used, where an undeclared class-bound contribution is created (see
 * {@link Lifetime}): per tenant if it injects — itself, or through the classes it injects, the classes
 * plugins bound its identifiers to (`to`, `toSelf`, `toService`) and the contributions it injects —
 * anything that differs per tenant; else once per container. Read from the classes' decorators, never
 * by resolving anything: what a dynamic value resolves is not seen here, and is checked when it is
 * resolved ({@link ScopedServices}). @internal
 */
export class LifetimePlanner {
  /** Contributions being planned (a cycle between them is reported when they are created). */
  readonly #planning = new Set<Contribution>();

  constructor(private readonly graph: BindingGraph) {}

  /** A contribution's lifetime, decided now for an undeclared class. */
  lifetimeOf(contribution: Contribution): Lifetime {
    if (contribution.lifetime !== undefined) return contribution.lifetime;
    if (this.#planning.has(contribution)) return 'container';
    this.#planning.add(contribution);
    try {
      return (contribution.lifetime = this.perTenantDependency(contribution.class!) === undefined ? 'container' : 'tenant');
    } finally {
      this.#planning.delete(contribution);
    }
  }

  /** The first thing that differs per tenant that `type` injects, directly or not; `undefined` if none is seen. */
  perTenantDependency(type: Newable): PerTenantDependency | undefined {
    return this.#throughClass(type, new Set(), 0);
  }

  #throughClass(type: Newable, visiting: Set<Newable>, depth: number): PerTenantDependency | undefined {
    if (depth > MAX_DEPTH || visiting.has(type)) return undefined;
    visiting.add(type);
    try {
      for (const { id, name } of injectedServices(type)) {
        const found = this.#throughService(id, name, visiting, depth);
        if (found) return found;
      }
      return undefined;
    } finally {
      visiting.delete(type);
    }
  }

  #throughService(id: ServiceIdentifier, name: MetadataName | undefined, visiting: Set<Newable>, depth: number): PerTenantDependency | undefined {
    const kernelService = this.graph.perTenantService(id, name);
    if (kernelService !== undefined) return { chain: [kernelService], why: 'differs per tenant' };
    for (const contribution of this.graph.contributions(id, name)) {
      if (contribution.source.type === 'class' && isPerTenant(this.lifetimeOf(contribution))) {
        return { chain: [contribution.describe()], why: `is created per tenant (plugin "${contribution.plugin}")` };
      }
    }
    const through = (found: PerTenantDependency | undefined): PerTenantDependency | undefined =>
      found && { ...found, chain: [name === undefined ? serviceName(id) : `${serviceName(id)} named "${String(name)}"`, ...found.chain] };
    if (typeof id === 'function') {
      const found = through(this.#throughClass(id as Newable, visiting, depth + 1));
      if (found) return found;
    }
    if (depth >= MAX_DEPTH) return undefined;
    for (const target of this.graph.rawTargets(id)) {
      const found = 'class' in target ? (target.class === id ? undefined : this.#throughClass(target.class, visiting, depth + 1)) : this.#throughService(target.alias, undefined, visiting, depth + 1);
      if (found) return through(found);
    }
    return undefined;
  }
}

/** Whether a lifetime creates an instance per tenant. @internal */
export function isPerTenant(lifetime: Lifetime): boolean {
  return lifetime === 'tenant' || lifetime === 'tenant-only';
}

/**
 * The {@link PluginError} (`scope-mismatch`) for a contribution created once for several tenants (shared,
 * or once per container) that depends on something differing per tenant: naming both, and the chain
 * between them. `resolved`: found when creating it (through a binding the kernel cannot see into),
 * not in its decorators. @internal
 */
export function scopeMismatchError(contribution: Contribution, dependency: PerTenantDependency, resolved: boolean): PluginError {
  const subject = contribution.describe();
  const how = contribution.declared === 'shared' ? "is declared { scope: 'shared' }" : 'declares no scope and its decorators inject nothing that differs per tenant';
  const what = dependency.chain.at(-1)!;
  const chain = dependency.chain.length > 1 ? ` (${[subject, ...dependency.chain].join(' → ')})` : '';
  const found = resolved ? `creating it resolved ${what}, which ${dependency.why}, through a binding the kernel cannot see into` : `it injects ${what}, which ${dependency.why}`;
  return new PluginError(
    contribution.plugin,
    'scope-mismatch',
    `${subject} ${how}, but ${found}${chain}: one instance would serve every tenant with one tenant's ${what}. Declare it { scope: 'tenant' }, or inject only what is the same for every tenant`,
  );
}
