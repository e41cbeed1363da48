import { hookSlot, type HookSlot } from './hook-guard.js';
import type { NamedStepHooks, StepHookName, StepHooks } from './step-hooks.js';

/** Hooks of one owner, with optional labels for reports (e.g. `onMessagePart` for the `onPart` slot). */
export interface HookBusEntry extends NamedStepHooks {
  readonly labels?: Partial<Record<StepHookName, string>>;
}

/** The event a hook receives. */
export type EventOf<H extends StepHookName> = Parameters<NonNullable<StepHooks[H]>>[0];

/** The slots of every hook name, in registration order. */
export type HookSlots = { readonly [H in StepHookName]: readonly HookSlot<EventOf<H>>[] };

const HOOK_NAMES: readonly StepHookName[] = [
  'onStepStart',
  'onPart',
  'onToolCall',
  'onToolResult',
  'onApprovalRequest',
  'onApprovalDecision',
  'onStepEnd',
  'onCleanup',
  'onRetry',
  'onProviderSwitch',
];

const HOOK_NAME_SET: ReadonlySet<string> = new Set(HOOK_NAMES);

/** The slots of a hook nobody has: one shared empty list. */
const NONE: readonly HookSlot<never>[] = Object.freeze([]);

/** Tags an entries list made by {@link HookTable.join} with its table. */
const TABLE = Symbol('kosong.HookTable');

/** Tables of the lists given to {@link HookTable.join} as `base` (built once each). */
const bases = new WeakMap<readonly HookBusEntry[], HookTable>();

/**
 * The hook slots of a list of hook owners, per hook name, in registration order: which methods each
 * owner has, read once. Immutable (the guard of each step counts failures), so one table can serve
 * every step with the same hooks: a kernel runner's steps build none (see {@link HookTable.join}).
 */
export class HookTable {
  /** The table of no hooks. */
  static readonly EMPTY: HookTable = new HookTable(Object.freeze(Object.fromEntries(HOOK_NAMES.map((hook) => [hook, NONE]))) as unknown as HookSlots);

  private constructor(readonly slots: HookSlots) {}

  /** The table of `entries`: the one {@link HookTable.join} made it with, else read from the hooks now. */
  static of(entries: readonly HookBusEntry[]): HookTable {
    if (entries.length === 0) return HookTable.EMPTY;
    return (entries as { [TABLE]?: HookTable })[TABLE] ?? new HookTable(slotsOf(entries));
  }

  /**
   * `base` then `extra`, as one entries list that carries its table, so that the step it is given to
   * (`step({ hooks })`) reads no hook method: `base`'s table is built on its first join and kept
   * (the hooks of `base` are read then, once), and `extra`'s slots appended per call. For lists that
   * do not change, such as a kernel scope's resolved hooks; the list returned must not be changed.
   */
  static join(base: readonly HookBusEntry[], extra: readonly HookBusEntry[]): readonly HookBusEntry[] {
    let table = bases.get(base);
    if (table === undefined) {
      table = HookTable.of(base);
      bases.set(base, table);
    }
    const joined: HookBusEntry[] & { [TABLE]?: HookTable } = [...base, ...extra];
    joined[TABLE] = extra.length === 0 ? table : new HookTable(slotsAfter(table.slots, extra));
    return joined;
  }
}

/** `before`, with the slots of `entries` appended (a copy of the lists that change, the others shared). */
function slotsAfter(before: HookSlots, entries: readonly HookBusEntry[]): HookSlots {
  const slots: Record<string, readonly HookSlot<never>[]> = { ...before };
  for (const entry of entries) {
    const hooks = entry.hooks as Record<string, unknown>;
    // A plain object: its own properties are its hooks (one for the kernel's own), fewer to look at than every hook name.
    const names: Iterable<string> = Object.getPrototypeOf(hooks) === Object.prototype ? Object.getOwnPropertyNames(hooks) : HOOK_NAMES;
    for (const hook of names) {
      const fn = hooks[hook];
      if (typeof fn !== 'function' || !HOOK_NAME_SET.has(hook)) continue;
      const name = hook as StepHookName;
      slots[name] = [...slots[name]!, hookSlot(entry.name, entry.labels?.[name] ?? name, fn as (event: never) => unknown, hooks)];
    }
  }
  return slots as unknown as HookSlots;
}

/** The slots of every hook name, in registration order (a shared empty list for a hook nobody has). */
function slotsOf(entries: readonly HookBusEntry[]): HookSlots {
  const slots: Record<string, readonly HookSlot<never>[]> = {};
  for (const hook of HOOK_NAMES) {
    let list: HookSlot<never>[] | undefined;
    for (const entry of entries) {
      const fn = entry.hooks[hook] as ((event: never) => unknown) | undefined;
      if (typeof fn === 'function') (list ??= []).push(hookSlot(entry.name, entry.labels?.[hook] ?? hook, fn, entry.hooks));
    }
    slots[hook] = list ?? NONE;
  }
  return slots as unknown as HookSlots;
}
