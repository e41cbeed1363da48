/**
 * The options a builder knows, one `true` per name: written as `KnownOptions<Options>`, the compiler
 * keeps it the same as the options' interface. @internal
 */
export type KnownOptions<Options> = { readonly [Name in keyof Required<Options>]: true };

/**
 * Refuses options a builder does not know: an option dropped quietly (a misspelt `filter`, `env`
 * or `headers`) would offer tools that were meant to be hidden, start a server without its
 * environment, or call it without its credentials.
 *
 * @throws TypeError naming the option and those there are (also for options that are not an object).
 * @internal
 */
export function checkKnownOptions(owner: string, options: unknown, known: Readonly<Record<string, true>>): void {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw new TypeError(`${owner}: the options must be an object`);
  for (const key of Object.keys(options)) {
    if (!Object.hasOwn(known, key)) throw new TypeError(`${owner}: unknown option "${key}" (its options: ${Object.keys(known).join(', ')})`);
  }
}
