/**
 * The options a builder knows, one `true` per name: written as `Record<keyof Options, true>`, the
 * compiler keeps it the same as the options' interface.
 */
export type KnownOptions<Options> = { readonly [Name in keyof Required<Options>]: true };

/**
 * Refuses options a builder does not know (for the builders of core and of the packages on it): an
 * option dropped quietly (a misspelt `approvalSecret`, `tenant` or `timeoutMs`) would leave a queue
 * unsigned, a call on another tenant's queue, a limit unset.
 *
 * @throws TypeError naming the option and those there are (also for options that are not an object).
 */
export function checkKnownOptions(owner: string, options: unknown, known: Readonly<Record<string, true>>): void {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw new TypeError(`${owner}: the options must be an object`);
  for (const key of Object.keys(options)) {
    if (!Object.hasOwn(known, key)) throw new TypeError(`${owner}: unknown option "${key}" (its options: ${Object.keys(known).join(', ')})`);
  }
}
