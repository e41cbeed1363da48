/**
 * Keys a `for…in` deep merge into a plain object follows from the target into something shared:
 * every member of `Object.prototype` (`constructor` leads to `Object` and on to `Object.prototype`,
 * `toString` to the built-in function, …), and `prototype` (from a function to its prototype).
 */
const SHARED_PATH_KEYS = new Set([...Object.getOwnPropertyNames(Object.prototype), 'prototype']);

/**
 * Removes, at any depth, in place, the keys of parsed arguments through which a careless copy could
 * reach a prototype or a built-in, and returns the value:
 *
 * - every own `__proto__` key. `JSON.parse` makes it a plain own property (it never sets a
 *   prototype), but `Object.assign`, a `for…in` merge or a deep-merge helper would turn it into one;
 * - every key whose value is an object or an array and whose name is a member of
 *   `Object.prototype` (`constructor`, `toString`, `hasOwnProperty`, …) or `prototype`. A naive
 *   deep merge of `{"constructor": {"prototype": {"isAdmin": true}}}` into `{}` walks from the
 *   target's inherited `constructor` (`Object`) to `Object.prototype` and writes `isAdmin` there; of
 *   `{"constructor": {"assign": 1}}`, it overwrites `Object.assign`; of `{"hasOwnProperty": {"call":
 *   1}}`, it breaks `Object.prototype.hasOwnProperty.call` for everyone. Such a key with a string,
 *   number, boolean or `null` value stays, as plain data: copying it replaces only the target's own key.
 *
 * After this, a deep merge of the arguments into a plain object reaches nothing shared. (A merge
 * into an array or a class instance can still follow *their* inherited members.)
 *
 * Zod already drops `__proto__` from the objects it builds; this also covers values zod passes
 * through (`z.any()`, `z.unknown()`, `z.json()`) and JSON-Schema tools. Only plain objects and
 * arrays are walked (iteratively: deep nesting cannot exhaust the stack); class instances a zod
 * transform may produce are left alone, and shared or cyclic references are visited once.
 */
export function stripPrototypeKeys<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  const seen = new Set<object>();
  const stack: object[] = [value];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (seen.has(node)) continue;
    seen.add(node);
    if (Array.isArray(node)) {
      for (const item of node as unknown[]) if (typeof item === 'object' && item !== null) stack.push(item);
      continue;
    }
    const prototype: unknown = Object.getPrototypeOf(node);
    if (prototype !== Object.prototype && prototype !== null) continue;
    // Reflect: a frozen object (e.g. from `z.readonly()`) keeps the key instead of throwing.
    if (Object.hasOwn(node, '__proto__')) Reflect.deleteProperty(node, '__proto__');
    for (const key of Object.keys(node)) {
      const item = (node as Record<string, unknown>)[key];
      if (typeof item !== 'object' || item === null) continue;
      if (SHARED_PATH_KEYS.has(key)) Reflect.deleteProperty(node, key);
      else stack.push(item);
    }
  }
  return value;
}
