import type { HookErrorHandler, HookFailureKind } from '../runtime/hooks/hook-guard.js';
import { errorMessage, KernelError, PluginError } from './errors.js';
import { writeDisposalErrorToStderr, type DisposalErrorReport } from './hook-error-sink.js';

/** Default time one deactivation (a `@preDestroy`, a deactivation handler, an `onDispose` callback) may take. */
export const DEFAULT_DEACTIVATION_TIMEOUT_MS = 5_000;

/** What is being taken down, for reports. @internal */
export interface DisposalSite {
  /** The plugin that bound it; `undefined` for what a tenant's modules (or the kernel itself) bound. */
  readonly plugin: string | undefined;
  /** The tenant whose scope it belongs to (`undefined`: the kernel's). */
  readonly tenant: string | undefined;
  /** The service: `hooks UsageMeter`, `Symbol(Db)`, `onDispose #1`. */
  readonly service: string;
  /** What of it ran: `@preDestroy`, `onDeactivation`, `deactivation`, `onDispose`, `unload`. */
  readonly hook: string;
}

/** How a deactivation ended. @internal */
export type Outcome = { readonly ok: true } | { readonly ok: false; readonly kind: HookFailureKind; readonly error: unknown };

/**
 * One disposal (a tenant's removal, the kernel's disposal, the rollback of a failed `use`): runs
 * each deactivation awaited, within a deadline, and reports each failure — a throw, a rejection, a
 * deadline passed — to the handler, as a {@link DisposalErrorReport}. Never throws. @internal
 */
export class Disposal {
  constructor(
    private readonly timeoutMs: number,
    private readonly onError: HookErrorHandler,
  ) {}

  /**
   * Runs one deactivation and waits for it, at most the deadline. Returns whether it completed (a
   * deactivation that failed or is still running must not be tried again).
   */
  async run(site: DisposalSite, deactivate: () => unknown): Promise<boolean> {
    let returned: unknown;
    try {
      returned = deactivate();
    } catch (error) {
      this.report(site, 'threw', error);
      return false;
    }
    if (!isThenable(returned)) return true;
    return this.settle(site, returned);
  }

  /** Waits for a deactivation already running, at most the deadline; reports how it failed. */
  settle(site: DisposalSite, running: PromiseLike<unknown>): Promise<boolean> {
    return this.await(
      site,
      Promise.resolve(running).then(
        (): Outcome => ({ ok: true }),
        (error: unknown): Outcome => ({ ok: false, kind: 'rejected', error }),
      ),
    );
  }

  /**
   * Waits for an outcome, at most the deadline; reports a failed outcome, or the deadline passing
   * (and then not the outcome, whenever it comes).
   */
  await(site: DisposalSite, outcome: Promise<Outcome>): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      let done = false;
      const timer = setTimeout(() => {
        done = true;
        this.report(site, 'timeout', new Error(`it did not settle within ${this.timeoutMs} ms`));
        resolve(false);
      }, this.timeoutMs);
      void outcome.then((settled) => {
        if (done) return; // reported as a timeout already
        done = true;
        clearTimeout(timer);
        if (!settled.ok) this.report(site, settled.kind, settled.error);
        resolve(settled.ok);
      });
    });
  }

  /** Reports a failure (never throws: a throwing handler sends both to stderr). */
  report(site: DisposalSite, kind: HookFailureKind, error: unknown): void {
    const report = disposalReport(site, kind, error);
    try {
      this.onError(report);
    } catch (sinkError) {
      try {
        writeDisposalErrorToStderr(report);
        process.stderr.write(`[kosong] the hook-error sink threw while reporting it: ${errorMessage(sinkError)}\n`);
      } catch {
        // nowhere left to report to
      }
    }
  }
}

/** The report of a failed deactivation: its error is a {@link PluginError} (or, for a tenant's own binding, a {@link KernelError}). */
function disposalReport(site: DisposalSite, kind: HookFailureKind, cause: unknown): DisposalErrorReport {
  const how = kind === 'timeout' ? errorMessage(cause) : `${kind === 'threw' ? 'it threw' : 'it rejected'}: ${errorMessage(cause)}`;
  const where = site.tenant === undefined ? '' : ` of tenant "${site.tenant}"`;
  const message = `${site.service}${where} failed to deactivate (${site.hook}): ${how}`;
  const error =
    site.plugin !== undefined
      ? new PluginError(site.plugin, 'dispose-failed', message, { cause })
      : new KernelError(`${site.tenant === undefined ? 'The kernel' : `Tenant "${site.tenant}"`}: ${message}`, { cause });
  return {
    phase: 'dispose',
    plugin: site.plugin ?? (site.tenant === undefined ? 'kosong.kernel' : `tenant ${site.tenant} module`),
    service: site.service,
    hook: site.hook,
    stepId: '-',
    tenant: site.tenant,
    provider: undefined,
    model: undefined,
    kind,
    error,
    detached: false,
  };
}

/** Module deactivation handlers started during one deactivation (or, outside any, in the background). */
interface Batch {
  /** The tenant being taken down, if any: a plugin's handler run for its service is reported as the tenant's. */
  readonly tenant: string | undefined;
  readonly running: Set<{ readonly site: DisposalSite; readonly outcome: Promise<Outcome> }>;
}

/**
 * Deactivation handlers registered on a module (`ctx.onDeactivation(id, fn)`, in a plugin or a
 * tenant's module). Inversify calls them (also for a tenant's binding of the id: a child container
 * runs its parent's handlers) but neither awaits an async one nor handles its rejection. The kernel
 * hands inversify a wrapper that returns at once and keeps what the handler started, in the batch
 * of the deactivation that made inversify call it, and awaits the batch after that deactivation —
 * within the deadline, failures reported. Deactivations run one at a time (a removal started while
 * another runs waits for it — one a handler starts and awaits, at most until that handler's
 * deadline), so that two tenants' handlers are never mixed up — without an async-local context,
 * which in Node 20 would slow every promise of the process from then on. A handler called outside the kernel's
 * deactivations (the application unbinding on the container) is awaited by the kernel's disposal. @internal
 */
export class ModuleDeactivations {
  #current: Batch | undefined;
  #queue: Promise<unknown> = Promise.resolve();
  readonly #background: Batch = { tenant: undefined, running: new Set() };

  /** The handler to give inversify in place of `handler`. */
  wrap<T>(site: DisposalSite, handler: (value: T) => unknown): (value: T) => void {
    return (value: T) => {
      const batch = this.#current ?? this.#background;
      const where: DisposalSite = site.tenant === undefined && batch.tenant !== undefined ? { ...site, tenant: batch.tenant } : site;
      let returned: unknown;
      try {
        returned = handler(value);
      } catch (error) {
        add(batch, where, Promise.resolve({ ok: false, kind: 'threw', error }));
        return;
      }
      if (!isThenable(returned)) return;
      add(
        batch,
        where,
        Promise.resolve(returned).then(
          (): Outcome => ({ ok: true }),
          (error: unknown): Outcome => ({ ok: false, kind: 'rejected', error }),
        ),
      );
    };
  }

  /**
   * Runs one deactivation (of `tenant`'s scope, or the kernel's) and then waits for the module
   * handlers it started, each at most the deadline, reporting their failures.
   */
  around<T>(disposal: Disposal, tenant: string | undefined, deactivate: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(async () => {
      const batch: Batch = { tenant, running: new Set() };
      this.#current = batch;
      let result: T;
      try {
        result = await deactivate();
      } finally {
        this.#current = undefined;
      }
      await drain(batch, disposal);
      return result;
    });
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /** Waits for the handlers started outside the kernel's deactivations (kernel disposal). */
  drainBackground(disposal: Disposal): Promise<void> {
    return drain(this.#background, disposal);
  }
}

function add(batch: Batch, site: DisposalSite, outcome: Promise<Outcome>): void {
  const entry = { site, outcome };
  batch.running.add(entry);
  // A handler that completed is forgotten at once; a failed one waits for the batch to be drained.
  void outcome.then((settled) => {
    if (settled.ok) batch.running.delete(entry);
  });
}

async function drain(batch: Batch, disposal: Disposal): Promise<void> {
  while (batch.running.size > 0) {
    const entries = [...batch.running];
    batch.running.clear();
    await Promise.all(entries.map(({ site, outcome }) => disposal.await(site, outcome)));
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function';
}
