/**
 * `randomUUID` of `node:crypto`, loaded at its first call rather than at import: `node:crypto`
 * loads a graph of Node's internal modules that costs a cold start that only imports kosong
 * (`kosong --help`, a process that has not run a step yet) about as much as the step runtime's own
 * modules. A step pays it once, at its first id.
 *
 * @module
 */

let uuid: (() => string) | undefined;

/** A random (version 4) UUID, lowercase. */
export function randomUUID(): string {
  uuid ??= process.getBuiltinModule('node:crypto').randomUUID;
  return uuid();
}
