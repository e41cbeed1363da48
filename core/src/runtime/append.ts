/**
 * Appends `item` to `list`, or starts the list with it. A list started as `[item]` holds one slot,
 * where `[]` followed by a push reserves 17: most lists of a step (its calls, their results, the
 * message's parts) hold one or two items, and thousands of steps may be in flight at once.
 *
 * @returns the list (the one given, or the new one).
 */
export function append<T>(list: T[] | undefined, item: T): T[] {
  if (list === undefined) return [item];
  list.push(item);
  return list;
}
