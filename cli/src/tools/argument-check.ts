/**
 * The argument check of the built-in tools whose arguments are a few strings and flags (`grep`,
 * `glob`, `write_file`, `edit_file`): an object with the required strings, and no key but those,
 * the optional strings and the booleans. What is wrong is told to the model as issues.
 *
 * @module
 */
import type { JsonValue } from '@kosong/core';
import type { ArgumentCheck, ValidationIssue } from '@kosong/toolset-simple';

/** The arguments a tool takes, by kind. */
export interface ArgumentKinds {
  readonly strings: readonly string[];
  readonly optionalStrings?: readonly string[];
  readonly booleans?: readonly string[];
}

/** Checks `args` against `kinds` (see the module); the value is the arguments as given. */
export function checkArguments<T>(args: JsonValue, kinds: ArgumentKinds): ArgumentCheck<T> {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return { ok: false, issues: [{ path: [], message: `Invalid input: expected object, received ${kindOf(args)}` }] };
  const given = args as { readonly [key: string]: JsonValue };
  const { strings, optionalStrings = [], booleans = [] } = kinds;
  const issues: ValidationIssue[] = [];
  const expect = (name: string, type: 'string' | 'boolean'): void => void issues.push({ path: [name], message: `Invalid input: expected ${type}, received ${kindOf(given[name])}` });
  for (const name of strings) if (typeof given[name] !== 'string') expect(name, 'string');
  for (const name of optionalStrings) if (given[name] !== undefined && typeof given[name] !== 'string') expect(name, 'string');
  for (const name of booleans) if (given[name] !== undefined && typeof given[name] !== 'boolean') expect(name, 'boolean');
  for (const name of Object.keys(given)) if (!strings.includes(name) && !optionalStrings.includes(name) && !booleans.includes(name)) issues.push({ path: [name], message: 'Unknown argument' });
  return issues.length > 0 ? { ok: false, issues } : { ok: true, value: given as T };
}

function kindOf(value: JsonValue | undefined): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}
