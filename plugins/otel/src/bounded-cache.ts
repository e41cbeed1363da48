/**
 * A map that forgets everything once it holds `capacity` entries: for values derived from a few
 * names (a tool's span name, a model's metric attributes) that are built once and reused by every
 * step, without letting an unbounded set of names (model or tenant ids from user input) grow it
 * forever.
 */
export class BoundedCache<K, V> {
  readonly #entries = new Map<K, V>();

  constructor(private readonly capacity: number) {}

  /** The value kept for `key`, if any. */
  get(key: K): V | undefined {
    return this.#entries.get(key);
  }

  /** Keeps `value` for `key` (first forgetting every value if the cache is full); returns `value`. */
  set(key: K, value: V): V {
    if (this.#entries.size >= this.capacity) this.#entries.clear();
    this.#entries.set(key, value);
    return value;
  }

  /** How many values are kept. */
  get size(): number {
    return this.#entries.size;
  }
}
