/**
 * Counts the steps running in a scope (a tenant, or the kernel itself), so that removal and
 * disposal can wait for them.
 */
export class StepLeases {
  private active = 0;
  private idleWaiters: (() => void)[] = [];

  /** Marks one step as running; the returned function (idempotent) marks it done. */
  lease(): () => void {
    this.active++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.active === 0) for (const wake of this.idleWaiters.splice(0)) wake();
    };
  }

  /** Resolves when no step is running. */
  idle(): Promise<void> {
    return this.active === 0 ? Promise.resolve() : new Promise((resolve) => this.idleWaiters.push(resolve));
  }
}
