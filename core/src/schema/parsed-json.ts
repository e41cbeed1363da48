/**
 * One rule for JSON a model wrote, before code sees it: numbers must be finite doubles, and no key
 * may lead a careless copy into a prototype or a built-in. Structured output applies all of it;
 * `@kosong/toolset-simple` strips the same keys from tool arguments.
 *
 * @module
 */
import type { SchemaIssue } from './schema-issues.js';

/** The issue of a number that is no finite double (`1e400`, which `JSON.parse` reads as `Infinity`). */
export const NUMBER_OUT_OF_RANGE = 'number out of range (not a finite double)';

/**
 * Keys a `for…in` deep merge into a plain object follows from the target into something shared:
 * every member of `Object.prototype` (`constructor` leads to `Object` and on to `Object.prototype`,
 * `toString` to the built-in function, …), and `prototype` (from a function to its prototype).
 */
const SHARED_PATH_KEYS = new Set([...Object.getOwnPropertyNames(Object.prototype), 'prototype']);

/** A container being walked, and how it was reached (to name the path of an issue). */
interface Visit {
  readonly node: object;
  readonly parent: Visit | undefined;
  readonly key: string | number | undefined;
}

/**
 * Checks and cleans, in place, a value just parsed from JSON a model wrote, at any depth:
 *
 * - a number that is not finite is an issue at its path ({@link NUMBER_OUT_OF_RANGE}): JSON has no
 *   `Infinity`, but `JSON.parse` reads a literal beyond the double range (`1e400`, `-1e999`) as one,
 *   which `JSON.stringify` then writes as `null` and arithmetic turns into `NaN`;
 * - the keys through which a careless copy could reach a prototype or a built-in are removed, as
 *   {@link stripPrototypeKeys} does (what is under them is not checked: it is gone).
 *
 * Structured output applies it to every answer, whatever its schema (zod, JSON Schema, another
 * Standard Schema), before validating it. Iterative: deep nesting cannot exhaust the stack.
 */
export function checkParsedJson(value: unknown): { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly issues: readonly SchemaIssue[] } {
  if (typeof value === 'number') return Number.isFinite(value) ? { ok: true, value } : { ok: false, issues: [{ path: [], message: NUMBER_OUT_OF_RANGE }] };
  const issues: SchemaIssue[] = [];
  walk(value, (visit, key, item) => {
    if (typeof item === 'number' && !Number.isFinite(item)) issues.push({ path: pathOf(visit, key), message: NUMBER_OUT_OF_RANGE });
  });
  return issues.length === 0 ? { ok: true, value } : { ok: false, issues };
}

/**
 * Removes, at any depth, in place, the keys of parsed JSON through which a careless copy could
 * reach a prototype or a built-in, and returns the value:
 *
 * - every own `__proto__` key. `JSON.parse` makes it a plain own property (it never sets a
 *   prototype), but `Object.assign`, a `for…in` merge or a deep-merge helper would turn it into one;
 * - every key whose value is an object or an array and whose name is a member of
 *   `Object.prototype` (`constructor`, `toString`, `hasOwnProperty`, …) or `prototype`. A naive
 *   deep merge of `{"constructor": {"prototype": {"isAdmin": true}}}` into `{}` walks from the
 *   target's inherited `constructor` (`Object`) to `Object.prototype` and writes `isAdmin` there; of
 *   `{"constructor": {"assign": 1}}`, it overwrites `Object.assign`. Such a key with a string,
 *   number, boolean or `null` value stays, as plain data: copying it replaces only the target's own key.
 *
 * The rule `@kosong/toolset-simple` applies to tool arguments. Only plain objects and arrays are
 * walked (iteratively); class instances (a zod transform's) are left alone, and shared or cyclic
 * references are visited once. A frozen object keeps its keys.
 */
export function stripPrototypeKeys<T>(value: T): T {
  walk(value, () => undefined);
  return value;
}

/**
 * Walks the plain objects and arrays of `value`, removing the prototype keys of each object before
 * its entries are visited; calls `each` with every entry that is not a container walked further.
 */
function walk(value: unknown, each: (visit: Visit, key: string | number, item: unknown) => void): void {
  if (typeof value !== 'object' || value === null) return;
  const seen = new Set<object>();
  const stack: Visit[] = [{ node: value, parent: undefined, key: undefined }];
  while (stack.length > 0) {
    const visit = stack.pop()!;
    const { node } = visit;
    if (seen.has(node)) continue;
    seen.add(node);
    if (Array.isArray(node)) {
      const items = node as unknown[];
      for (let i = 0; i < items.length; i++) {
        const item = items[i];
        if (typeof item === 'object' && item !== null) stack.push({ node: item, parent: visit, key: i });
        else each(visit, i, item);
      }
      continue;
    }
    const prototype: unknown = Object.getPrototypeOf(node);
    if (prototype !== Object.prototype && prototype !== null) continue;
    // Reflect: a frozen object (e.g. from `z.readonly()`) keeps the key instead of throwing.
    if (Object.hasOwn(node, '__proto__')) Reflect.deleteProperty(node, '__proto__');
    for (const key of Object.keys(node)) {
      const item = (node as Record<string, unknown>)[key];
      if (typeof item !== 'object' || item === null) each(visit, key, item);
      else if (SHARED_PATH_KEYS.has(key)) Reflect.deleteProperty(node, key);
      else stack.push({ node: item, parent: visit, key });
    }
  }
}

/** The path from the root to `key` of the container `visit` reached. */
function pathOf(visit: Visit, key: string | number): (string | number)[] {
  const path: (string | number)[] = [key];
  for (let at: Visit | undefined = visit; at?.key !== undefined; at = at.parent) path.push(at.key);
  return path.reverse();
}
