/**
 * Removes every own `__proto__` key from parsed arguments, at any depth, in place, and returns the
 * value. `JSON.parse` makes `__proto__` a plain own property (it never sets a prototype), but a
 * tool that copies its arguments with `Object.assign`, a `for…in` merge or a deep-merge helper would
 * turn that property into a prototype. Zod already drops the key from the objects it builds; this
 * also covers values zod passes through (`z.any()`, `z.unknown()`, `z.json()`) and JSON-Schema tools.
 *
 * Only plain objects and arrays are walked (iteratively: deep nesting cannot exhaust the stack);
 * class instances a zod transform may produce are left alone, and shared or cyclic references are
 * visited once.
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
    for (const key in node) {
      if (!Object.hasOwn(node, key)) continue;
      const item = (node as Record<string, unknown>)[key];
      if (typeof item === 'object' && item !== null) stack.push(item);
    }
  }
  return value;
}
