import { dependencyPath, serviceName } from './class-metadata.js';
import type { Contribution } from './contribution.js';
import { errorMessage, PluginError } from './errors.js';

const UNBOUND = /^No bindings found for service: "(.*?)"\.\s+Trying to resolve bindings for "(.*?)(?: \(Root service\))?"\.(?:[\s\S]*?- name: (.*))?/;
const CIRCULAR = /^Circular dependency found: (.*)/;
const ASYNCHRONOUS = /asynchronous/i;
/** How inversify wraps what a lifecycle method threw (the thrown value is its `cause`). */
const WRAPPED = /^Unexpected error found when calling/;

/**
 * The {@link PluginError} for a class-bound contribution that could not be resolved in a scope,
 * naming the plugin, the tenant (if any) and the chain of services from the contribution to what
 * failed. A `PluginError` (from a nested contribution) is returned as it is.
 */
export function resolutionError(contribution: Contribution, tenant: string | undefined, error: unknown): PluginError {
  if (PluginError.isInstance(error)) return error;
  const subject = `${contribution.describe()}${tenant === undefined ? '' : ` for tenant "${tenant}"`}`;
  const message = errorMessage(error);
  const unbound = UNBOUND.exec(message);
  if (unbound) {
    const [, missing = '?', parent = '', name] = unbound;
    const named = name !== undefined && name.trim() !== '-' ? `${missing} named "${name.trim()}"` : missing;
    const chain = [contribution.describe(), ...pathTo(contribution, parent), named];
    return new PluginError(contribution.plugin, 'unbound-dependency', `${subject} cannot be created: nothing is bound to ${named} (${chain.join(' → ')})`, { cause: error });
  }
  const circular = CIRCULAR.exec(message);
  if (circular) {
    const trace = circular[1]!.replaceAll(String(contribution.token), contribution.describe()).replaceAll(' -> ', ' → ');
    return new PluginError(contribution.plugin, 'circular-dependency', `${subject} cannot be created: its dependencies form a cycle (${trace})`, { cause: error });
  }
  const hint = ASYNCHRONOUS.test(message)
    ? ' (services the kernel resolves must be created synchronously: no async @postConstruct or async dependencies; do async work in the plugin setup)'
    : '';
  const thrown = WRAPPED.test(message) && error instanceof Error && error.cause !== undefined ? error.cause : error;
  const detail = thrown === error ? message : `${message}: ${errorMessage(thrown)}`;
  return new PluginError(contribution.plugin, 'resolution-failed', `${subject} could not be created: ${detail}${hint}`, { cause: thrown });
}

/**
 * The {@link PluginError} for a contribution asked for while it is being created: the chain of
 * contributions being created, from the first request for it.
 */
export function circularContributionError(chain: readonly Contribution[], tenant: string | undefined): PluginError {
  const first = chain[0]!;
  const where = tenant === undefined ? '' : ` for tenant "${tenant}"`;
  const trace = [...chain, first].map((c) => c.describe()).join(' → ');
  return new PluginError(first.plugin, 'circular-dependency', `${first.describe()}${where} cannot be created: its dependencies form a cycle (${trace})`);
}

/** The services between a contribution's class and `parent` (which requested the missing one). */
function pathTo(contribution: Contribution, parent: string): string[] {
  const type = contribution.class;
  if (parent === '' || parent === String(contribution.token) || (type && parent === serviceName(type))) return [];
  return (type && dependencyPath(type, parent)) ?? ['…', parent];
}
