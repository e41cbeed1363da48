/**
 * A count for people, its thousands grouped with commas: `1,234,567`. The same text as
 * `n.toLocaleString('en')` for an integer, without loading the locale data, which costs tens of
 * milliseconds the first time (in every process: the CLI prints a count at the end of each turn).
 * A number that is not a safe integer is printed as `String(n)`.
 */
export function formatCount(n: number): string {
  if (!Number.isSafeInteger(n)) return String(n);
  const digits = String(Math.abs(n)).replace(/\B(?=(\d{3})+$)/g, ',');
  return n < 0 ? `-${digits}` : digits;
}
