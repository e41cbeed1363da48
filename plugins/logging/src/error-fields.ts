/** A value with the shape of an `Error`: a string `name` and `message` (any realm, any copy of a class). */
export interface ErrorLike {
  readonly name: string;
  readonly message: string;
  readonly stack?: string;
  readonly cause?: unknown;
}

/** Whether a value is an `Error`, or has its shape (e.g. a `DOMException` or an error of another realm). */
export function isErrorLike(value: unknown): value is ErrorLike {
  if (value instanceof Error) return true;
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<ErrorLike>;
  return typeof candidate.name === 'string' && typeof candidate.message === 'string';
}

/**
 * The loggable fields of an error, one level deep: `name`, `message`, its own enumerable properties
 * (e.g. `statusCode`, `requestId`, `traceId` of a provider's `APIStatusError`, or a `code`), its
 * `cause` and, for an `AggregateError`, its `errors` (both left as they are: the caller walks them),
 * and the `stack` last. Nothing is redacted here.
 */
export function errorFields(error: ErrorLike): Record<string, unknown> {
  const fields: Record<string, unknown> = { name: error.name, message: error.message };
  for (const key of Object.keys(error)) {
    if (Object.hasOwn(fields, key) || key === 'stack') continue;
    setField(fields, key, readProperty(error, key));
  }
  // `cause` and `errors` are own but not enumerable when set by the Error constructors.
  if (!Object.hasOwn(fields, 'cause') && error.cause !== undefined) fields['cause'] = error.cause;
  const errors = readProperty(error, 'errors');
  if (!Object.hasOwn(fields, 'errors') && Array.isArray(errors)) fields['errors'] = errors;
  if (typeof error.stack === 'string') fields['stack'] = error.stack;
  return fields;
}

/** Reads a property, turning a throwing getter into a marker instead of an exception. */
export function readProperty(target: object, key: string): unknown {
  try {
    return (target as Record<string, unknown>)[key];
  } catch {
    return '[unreadable]';
  }
}

/** Sets `target[key]` as an own data property, even for `__proto__`. */
export function setField(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}
