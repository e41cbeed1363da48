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

/** What follows a parent signal: an `AbortController`, or a {@link RequestSignal}. */
interface Follower {
  abort(reason?: unknown): void;
}

/** The children following each parent signal (one abort listener per parent). */
const followers = new WeakMap<AbortSignal, Set<Follower>>();

const noop = (): void => undefined;

/** A child of `parent` (or a signal that never aborts, if there is no parent). @internal */
export function childSignal(parent: AbortSignal | undefined): ChildSignal {
  const controller = new AbortController();
  if (!parent) return { signal: controller.signal, release: noop };
  const release = follow(parent, controller);
  return { signal: controller.signal, release };
}

/** Makes `follower` abort when `parent` does (at once if it has); returns how to stop following. */
function follow(parent: AbortSignal, follower: Follower): () => void {
  if (parent.aborted) {
    follower.abort(parent.reason);
    return noop;
  }
  let children = followers.get(parent);
  if (!children) {
    const created = new Set<Follower>();
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
  children.add(follower);
  const following = children;
  return () => following.delete(follower);
}

/**
 * The signal of one SDK request on the hot path (a plain `tools/call`): what the SDK's
 * `Protocol.request` reads of a request's signal — `aborted`, `reason`, `throwIfAborted()`, and one
 * `abort` listener it adds and never removes — without the cost of an `AbortSignal` (creating one
 * takes ~12 µs on Node 20, a fifth of what the toolset adds to a call). `release` drops the SDK's
 * listener with the request. Only for `Client.request`-based calls: anything that hands the signal
 * on (to `fetch`, `AbortSignal.any`) needs a real one (`childSignal`). The abort tests of the
 * toolset go through it.
 */
class RequestSignal implements Follower {
  aborted = false;
  reason: unknown = undefined;
  #listeners: (() => void)[] | undefined = [];

  throwIfAborted(): void {
    if (this.aborted) throw this.reason;
  }

  addEventListener(type: string, listener: () => void): void {
    if (type === 'abort') this.#listeners?.push(listener);
  }

  removeEventListener(type: string, listener: () => void): void {
    if (type === 'abort' && this.#listeners) this.#listeners = this.#listeners.filter((l) => l !== listener);
  }

  abort(reason?: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.#listeners ?? [];
    this.#listeners = undefined;
    for (const listener of listeners) listener();
  }

  release(): void {
    this.#listeners = undefined;
  }
}

/** Runs one SDK request with a {@link RequestSignal} following `parent`, releasing it afterwards. @internal */
export async function withRequestSignal<T>(parent: AbortSignal, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const signal = new RequestSignal();
  const unfollow = follow(parent, signal);
  try {
    return await run(signal as unknown as AbortSignal);
  } finally {
    unfollow();
    signal.release();
  }
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
