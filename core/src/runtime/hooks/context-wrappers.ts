import { isThenable, type HookFailureKind } from './hook-guard.js';
import type { ContextScope, NamedStepHooks } from './step-hooks.js';

/** Reports one failure of a `runInContext` hook (`detached`: it will not be called again). */
export type WrapperFailureReporter = (plugin: string, kind: HookFailureKind, error: unknown, detached: boolean) => void;

interface WrapperSlot {
  readonly plugin: string;
  readonly self: NamedStepHooks['hooks'];
  readonly fn: NonNullable<NamedStepHooks['hooks']['runInContext']>;
  failures: number;
}

const HOOK = 'runInContext';

/**
 * The `runInContext` hooks of one step (or turn), nested in registration order (the first is
 * outermost) and guarded: whatever a hook does — throw, return before calling `run`, call it twice,
 * return a promise of its own that rejects — the work runs exactly once, its own result (or
 * exception) is what the caller gets, and the failure is reported. A hook failing `maxFailures`
 * times is detached (skipped) for the rest of the step.
 *
 * {@link ContextWrappers.of} returns `undefined` when no hook has `runInContext`, so a step without
 * such hooks allocates nothing and wraps nothing.
 */
export class ContextWrappers {
  private constructor(
    private readonly slots: readonly WrapperSlot[],
    private readonly report: WrapperFailureReporter,
    private readonly maxFailures: number,
  ) {}

  /** The wrappers of `entries`, or `undefined` when none has a `runInContext` hook. */
  static of(entries: readonly NamedStepHooks[], report: WrapperFailureReporter, maxFailures: number): ContextWrappers | undefined {
    let slots: WrapperSlot[] | undefined;
    for (const entry of entries) {
      const fn = entry.hooks.runInContext;
      if (typeof fn === 'function') (slots ??= []).push({ plugin: entry.name, self: entry.hooks, fn, failures: 0 });
    }
    return slots && new ContextWrappers(slots, report, maxFailures);
  }

  /** Runs `work` inside every hook's context (see the class notes); returns or throws what `work` does. */
  run<T>(scope: ContextScope, work: () => T): T {
    return this.wrap(0, scope, work);
  }

  private wrap<T>(position: number, scope: ContextScope, work: () => T): T {
    const slot = this.slots[position];
    if (slot === undefined) return work();
    if (slot.failures >= this.maxFailures) return this.wrap(position + 1, scope, work);

    type State = 'not run' | 'returned' | 'threw';
    let state = 'not run' as State;
    let value: T | undefined;
    let error: unknown;
    let calls = 0;
    const outcome = (): T => {
      if (state === 'not run') {
        try {
          value = this.wrap(position + 1, scope, work);
          state = 'returned';
        } catch (thrown) {
          error = thrown;
          state = 'threw';
        }
      }
      if (state === 'threw') throw error;
      return value as T;
    };
    const run = (): T => {
      if (++calls === 2) this.fail(slot, 'threw', new Error(`${HOOK} called run() more than once: the work ran once`));
      return outcome();
    };

    let returned: unknown;
    let hookThrew = false;
    try {
      returned = slot.fn.call(slot.self, scope, run);
    } catch (thrown) {
      // The work's own exception passing through the hook is not the hook's failure.
      hookThrew = state !== 'threw' || thrown !== error;
      if (hookThrew) this.fail(slot, 'threw', thrown);
    }
    const ranInside = state !== 'not run';
    if (returned !== value && isThenable(returned)) {
      // A promise of the hook's own (an async hook, or one derived from the work's): never unhandled.
      // Its rejection is the hook's failure only if the hook did not run the work in time.
      Promise.resolve(returned).then(undefined, (reason: unknown) => {
        if (!ranInside) this.fail(slot, 'rejected', reason);
      });
    }
    if (!ranInside && !hookThrew) {
      this.fail(slot, 'threw', new Error(`${HOOK} returned without calling run() (it must call it once, synchronously): the work ran outside its context`));
    }
    return outcome();
  }

  private fail(slot: WrapperSlot, kind: HookFailureKind, error: unknown): void {
    slot.failures++;
    try {
      this.report(slot.plugin, kind, error, slot.failures === this.maxFailures);
    } catch {
      // the reporter delivers to a guarded sink; nothing may escape into the work
    }
  }
}
