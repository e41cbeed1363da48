/**
 * Guarded invocation of user callbacks and plugin hooks.
 *
 * A hook may throw, reject, or never settle; none of that may change, stall or crash a step. Each
 * call goes through {@link HookGuard.invoke}: a synchronous throw, a rejection and a timeout are each
 * reported once to the {@link HookErrorHandler}; a rejection handler is attached to every promise a
 * hook returns, awaited or not, so no hook can cause an unhandled rejection.
 *
 * @module
 */

import { DEFAULT_HOOK_TIMEOUT_MS, DEFAULT_MAX_HOOK_FAILURES } from '../defaults.js';

/** How a hook failed. */
export type HookFailureKind = 'threw' | 'rejected' | 'timeout';

/** One hook failure. */
export interface HookErrorReport {
  /** The owner of the hook: a plugin name, or `options` for callbacks given to `step`/`generate`. */
  readonly plugin: string;
  /** The hook or callback, e.g. `onPart` or `onMessagePart`. */
  readonly hook: string;
  readonly stepId: string;
  readonly tenant: string | undefined;
  /** The provider and model of the step (`undefined` outside a step, e.g. an agent's event callback). */
  readonly provider: string | undefined;
  readonly model: string | undefined;
  readonly kind: HookFailureKind;
  /** The thrown value or rejection reason; for a timeout, an Error saying so. */
  readonly error: unknown;
  /** `true` when this failure detached the hook for the rest of the step. */
  readonly detached: boolean;
}

/** Receives hook failures. Must not throw (if it does, the failure goes to stderr instead). */
export type HookErrorHandler = (report: HookErrorReport) => void;

/** The default handler: one line on stderr per failure. */
export const writeHookErrorToStderr: HookErrorHandler = (report) => {
  const reason = report.error instanceof Error ? report.error.message : String(report.error);
  const tenant = report.tenant === undefined ? '' : ` tenant ${report.tenant}`;
  const detached = report.detached ? ' (detached for the rest of the step)' : '';
  process.stderr.write(
    `[kosong] hook ${report.plugin}.${report.hook} ${report.kind} in step ${report.stepId}${tenant}: ${reason}${detached}\n`,
  );
};

/** Settings of a {@link HookGuard}. */
export interface HookGuardOptions {
  readonly stepId: string;
  readonly tenant: string | undefined;
  readonly provider?: string | undefined;
  readonly model?: string | undefined;
  readonly onError: HookErrorHandler;
  /** How long an async hook may take before it is reported as timed out and no longer awaited. */
  readonly timeoutMs: number;
  /** Failures of one hook within one step after which it is detached for the rest of the step. */
  readonly maxFailures: number;
}

/**
 * What {@link HookGuard.forStep} reads: fields named as in `StepOptions` (and `GenerateOptions`), so
 * that a step can pass its own options.
 */
export interface StepGuardSettings {
  /** The tenant the step runs for, if any. */
  readonly tenant?: string | undefined;
  /** The step's provider: its name and model go into every report. */
  readonly provider: { readonly name: string; readonly modelName: string };
  /** Receives the failures; {@link writeHookErrorToStderr} when not given. */
  readonly onHookError?: HookErrorHandler | undefined;
  /** How long an async hook may take; `DEFAULT_HOOK_TIMEOUT_MS` when not given. */
  readonly hookTimeoutMs?: number | undefined;
}

/**
 * One hook method of one owner. Immutable, so that one slot serves every step with the same hooks:
 * each step's guard counts the slot's failures itself.
 */
export interface HookSlot<A = never> {
  /** Owner of the hook, for reports. */
  readonly plugin: string;
  /** Name of the hook or callback, for reports. */
  readonly hook: string;
  readonly fn: (arg: A) => unknown;
  /** `this` for the call. */
  readonly self: unknown;
}

/** Makes a {@link HookSlot}. */
export function hookSlot<A>(plugin: string, hook: string, fn: (arg: A) => unknown, self?: unknown): HookSlot<A> {
  return { plugin, hook, fn, self };
}

/** Guards the hook calls of one step. */
export class HookGuard {
  /** Hook calls still running (created with the first asynchronous one). */
  private inFlight: Set<Promise<void>> | undefined;
  /** Failures per slot in this step (created with the first failure). */
  private failures: Map<HookSlot<never>, number> | undefined;
  private readonly maxFailures: number;

  constructor(private readonly options: HookGuardOptions) {
    this.maxFailures = options.maxFailures;
  }

  /**
   * The guard of one step, or of work done for one (an agent turn's `runInContext` hooks, a retry
   * notice): its reports carry `stepId`, the tenant, the provider's name and model; failures go to
   * `onHookError` (else stderr), async hooks get `hookTimeoutMs` (else `DEFAULT_HOOK_TIMEOUT_MS`),
   * and a hook is detached after `DEFAULT_MAX_HOOK_FAILURES` failures.
   */
  static forStep(stepId: string, settings: StepGuardSettings): HookGuard {
    const { tenant, provider } = settings;
    return new HookGuard({
      stepId,
      tenant,
      provider: provider.name,
      model: provider.modelName,
      onError: settings.onHookError ?? writeHookErrorToStderr,
      timeoutMs: settings.hookTimeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS,
      maxFailures: DEFAULT_MAX_HOOK_FAILURES,
    });
  }

  /**
   * Calls the slot's hook with `arg`, guarded. Returns `undefined` when the hook finished
   * synchronously (or is detached), else a promise that always resolves: when the hook settles or
   * its timeout passes.
   */
  invoke<A>(slot: HookSlot<A>, arg: A): Promise<void> | undefined {
    if (this.failures !== undefined && this.isDetached(slot)) return undefined;
    let returned: unknown;
    try {
      returned = slot.fn.call(slot.self, arg);
    } catch (error) {
      this.report(slot, 'threw', error);
      return undefined;
    }
    if (returned === undefined || !isThenable(returned)) return undefined;
    return this.track(slot, returned);
  }

  /** Whether the slot failed often enough in this step to be detached. */
  private isDetached(slot: HookSlot<never>): boolean {
    return (this.failures?.get(slot) ?? 0) >= this.maxFailures;
  }

  /**
   * Resolves when every hook call still in flight has settled or timed out; `undefined` when none is
   * (nothing to wait for).
   */
  drain(): Promise<void> | undefined {
    const inFlight = this.inFlight;
    if (inFlight === undefined || inFlight.size === 0) return undefined;
    return Promise.all(inFlight).then(() => this.drain());
  }

  private track(slot: HookSlot<never>, returned: PromiseLike<unknown>): Promise<void> {
    const settled = new Promise<void>((resolve) => {
      let done = false;
      const timer = setTimeout(() => {
        done = true;
        this.report(slot, 'timeout', new Error(`hook did not settle within ${this.options.timeoutMs} ms`));
        resolve();
      }, this.options.timeoutMs);
      Promise.resolve(returned).then(
        () => {
          if (done) return;
          done = true;
          clearTimeout(timer);
          resolve();
        },
        (error: unknown) => {
          if (done) return; // already reported as a timeout
          done = true;
          clearTimeout(timer);
          this.report(slot, 'rejected', error);
          resolve();
        },
      );
    });
    const inFlight = (this.inFlight ??= new Set());
    inFlight.add(settled);
    void settled.then(() => inFlight.delete(settled));
    return settled;
  }

  /**
   * Reports a failure of a callback the guard did not call itself (one whose value the caller
   * needs, such as an approval handler). Never throws; detaches nothing itself (`detached` says
   * whether the caller detached the callback after this failure).
   */
  reportFailure(plugin: string, hook: string, kind: HookFailureKind, error: unknown, detached = false): void {
    this.deliver({ plugin, hook, kind, error, detached });
  }

  private report(slot: HookSlot<never>, kind: HookFailureKind, error: unknown): void {
    const failures = (this.failures ??= new Map());
    const count = (failures.get(slot) ?? 0) + 1;
    failures.set(slot, count);
    this.deliver({ plugin: slot.plugin, hook: slot.hook, kind, error, detached: count === this.maxFailures });
  }

  private deliver(failure: Pick<HookErrorReport, 'plugin' | 'hook' | 'kind' | 'error' | 'detached'>): void {
    const report: HookErrorReport = {
      ...failure,
      stepId: this.options.stepId,
      tenant: this.options.tenant,
      provider: this.options.provider,
      model: this.options.model,
    };
    try {
      this.options.onError(report);
    } catch (sinkError) {
      try {
        writeHookErrorToStderr(report);
        writeHookErrorToStderr({ ...report, plugin: 'kosong', hook: 'onHookError', kind: 'threw', error: sinkError, detached: false });
      } catch {
        // nowhere left to report to
      }
    }
  }
}

/** Whether a value is a promise-like (has a callable `then`). */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}
