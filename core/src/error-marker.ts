/**
 * Error classes of kosong carry a marker under a global symbol, and a static `isInstance(e)` that
 * checks it, so the check works across duplicated copies of a package (where `instanceof` fails).
 *
 * @module
 */

/** The global marker symbol of an error class name. */
export function errorMarker(className: string): symbol {
  return Symbol.for(`kosong.error.${className}`);
}

/** Marks an error as an instance of the class with this marker. */
export function markError(error: Error, marker: symbol): void {
  Object.defineProperty(error, marker, { value: true, enumerable: false });
}

/** Whether a value carries the marker. */
export function hasErrorMarker(value: unknown, marker: symbol): boolean {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[marker] === true;
}
