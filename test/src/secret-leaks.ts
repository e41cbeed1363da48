/**
 * Finding a secret anywhere in a value, the way an attacker reading a logged error would: written
 * apart from `scrubSecrets` (core), so the tests do not check it with its own eyes.
 */
import { inspect } from 'node:util';

/** The forms of a secret searched for: as it is, without its first character, URL-encoded, JSON-escaped. */
function formsOf(secret: string): string[] {
  return [secret, secret.slice(1), encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1)];
}

/**
 * Every path from `root` where `secret` can be read: strings in own properties (enumerable or not,
 * symbol-keyed, getters called), data on prototypes, `Headers`/`Map`/`Set` entries, bytes of
 * buffers, a `URL`'s text, and so on at any depth. Functions are code, not data: not entered.
 */
export function secretPaths(root: unknown, secret: string): string[] {
  const forms = formsOf(secret);
  const found: string[] = [];
  const seen = new Set<object>();
  const visit = (value: unknown, path: string): void => {
    if (typeof value === 'string') {
      if (forms.some((form) => value.includes(form))) found.push(path);
      return;
    }
    if (typeof value !== 'object' || value === null || seen.has(value)) return;
    seen.add(value);
    if (ArrayBuffer.isView(value)) return visit(Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('latin1'), `${path}<bytes>`);
    if (value instanceof URL) return visit(value.href, `${path}.href`);
    if (value instanceof Headers || value instanceof Map) for (const [key, item] of value as Map<unknown, unknown>) visit(item, `${path}.get(${String(key)})`);
    if (value instanceof Set) for (const item of value) visit(item, `${path}<item>`);
    for (const key of Reflect.ownKeys(value)) {
      const descriptor = Reflect.getOwnPropertyDescriptor(value, key)!;
      let item: unknown;
      try {
        item = 'value' in descriptor ? descriptor.value : descriptor.get?.call(value);
      } catch {
        continue;
      }
      visit(item, `${path}.${String(key)}`);
    }
    for (let proto: unknown = Object.getPrototypeOf(value); proto !== null && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
      for (const key of Reflect.ownKeys(proto as object)) {
        const descriptor = Reflect.getOwnPropertyDescriptor(proto as object, key)!;
        if ('value' in descriptor && typeof descriptor.value !== 'function') visit(descriptor.value, `${path}<proto>.${String(key)}`);
      }
    }
  };
  visit(root, '$');
  return found;
}

/**
 * Every way `secret` shows in `value`: {@link secretPaths}, and whether `util.inspect` (depth
 * unbounded, hidden properties and getters shown: what `console.error` prints, and more),
 * `JSON.stringify` or `String` print any form of it.
 */
export function secretLeaks(value: unknown, secret: string): string[] {
  const leaks = secretPaths(value, secret);
  const forms = formsOf(secret);
  const printed: [string, () => string][] = [
    ['util.inspect', () => inspect(value, { depth: Infinity, showHidden: true, getters: true })],
    ['JSON.stringify', () => JSON.stringify(value) ?? ''],
    ['String', () => String(value)],
  ];
  for (const [how, print] of printed) {
    let text: string;
    try {
      text = print();
    } catch {
      continue; // e.g. JSON.stringify of a cycle: prints nothing
    }
    if (forms.some((form) => text.includes(form))) leaks.push(how);
  }
  return leaks;
}
