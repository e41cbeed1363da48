/** Parses a whole number of at least `min` from a flag or an environment variable. */
export function positiveInt(text: string | undefined, name: string, min = 1): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be a whole number ≥ ${min}, got "${text}"`);
  return value;
}
