/**
 * Abort-signal helpers.
 *
 * The SDK never removes the listener it adds to a request's signal, and a step's signal is shared
 * by all its tool calls (tens may run at once). So every request gets a short-lived child signal,
 * and each parent signal gets one listener only, however many children follow it (no
 * `MaxListenersExceededWarning`, no listener left behind).
 *
 * @module
 * @internal
 */

/** A signal that aborts (with the same reason) when its parent does, until `release` is called. @internal */
export interface ChildSignal {
  readonly signal: AbortSignal;
  /** Stops following the parent. */
  release(): void;
}

/** The children following each parent signal (one abort listener per parent). */
const followers = new WeakMap<AbortSignal, Set<AbortController>>();

const noop = (): void => undefined;

/** A child of `parent` (or a signal that never aborts, if there is no parent). @internal */
export function childSignal(parent: AbortSignal | undefined): ChildSignal {
  const controller = new AbortController();
  if (!parent) return { signal: controller.signal, release: noop };
  if (parent.aborted) {
    controller.abort(parent.reason);
    return { signal: controller.signal, release: noop };
  }
  let children = followers.get(parent);
  if (!children) {
    const created = new Set<AbortController>();
    followers.set(parent, created);
    parent.addEventListener(
      'abort',
      () => {
        followers.delete(parent);
        for (const child of created) child.abort(parent.reason);
        created.clear();
      },
      { once: true },
    );
    children = created;
  }
  children.add(controller);
  const following = children;
  return { signal: controller.signal, release: () => following.delete(controller) };
}

/** Runs `run` with a child signal of `parent`, releasing it afterwards. @internal */
export async function withChildSignal<T>(parent: AbortSignal | undefined, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const child = childSignal(parent);
  try {
    return await run(child.signal);
  } finally {
    child.release();
  }
}

/** `promise`, or a rejection with the signal's reason as soon as it aborts. @internal */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  const child = childSignal(signal);
  return new Promise<T>((resolve, reject) => {
    child.signal.addEventListener('abort', () => reject(child.signal.reason), { once: true });
    promise.then(
      (value) => {
        child.release();
        resolve(value);
      },
      (error: unknown) => {
        child.release();
        reject(error);
      },
    );
  });
}
