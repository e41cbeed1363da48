import type { Container, ContainerModule } from 'inversify';
import type { ChatProvider } from '../provider/chat-provider.js';
import type { Toolset } from '../tooling/toolset.js';
import { unbindRecorded, type RecordedBinding } from './binding-recorder.js';
import type { Contribution } from './contribution.js';
import { errorMessage, PluginError } from './errors.js';
import type { Plugin } from './plugin.js';
import type { ServiceScope } from './service-scope.js';

/** What one used plugin contributed, and how to take it back. @internal */
export class PluginRecord {
  /** The module its `setup` runs in (set by the kernel). */
  module: ContainerModule | undefined;
  /** Its chat providers; the one it claimed as default first. */
  readonly providers: Contribution<ChatProvider>[] = [];
  /** Its global toolset, if it bound one. */
  toolset: Contribution<Toolset> | undefined;
  /** Everything it contributed through the helpers, in order. */
  readonly contributions: Contribution[] = [];
  /** What it bound through the raw module API, in order. */
  readonly bindings: RecordedBinding[] = [];
  readonly disposers: (() => void | Promise<void>)[] = [];
  claimedDefault = false;

  constructor(readonly plugin: Plugin) {}

  get name(): string {
    return this.plugin.name;
  }

  /** The names of its providers; the default one first. */
  providerNames(): string[] {
    return this.providers.map((p) => p.name!);
  }

  /**
   * Takes everything back, in reverse order: its services created in `scopes` (each scope in reverse
   * creation order), then what it bound through the raw module API (deactivation handlers and
   * `@preDestroy` run, awaited, one binding at a time), then its `onDispose` callbacks, then its
   * module (its activation and deactivation handlers). Failures are added to `errors` as
   * {@link PluginError}s `dispose-failed`; the rest still runs.
   *
   * A raw binding whose deactivation failed stays bound, so that it is not deactivated twice: when
   * `keepFailed` (kernel disposal), the module is then not unloaded either (inversify would try it
   * again). Returns whether every raw binding was deactivated.
   */
  async teardown(container: Container, scopes: Iterable<ServiceScope>, errors: unknown[], keepFailed: boolean): Promise<boolean> {
    const mine = new Set<Contribution>(this.contributions);
    for (const scope of scopes) await scope.deactivate(errors, (c) => mine.has(c));
    let clean = true;
    for (const binding of this.bindings.splice(0).reverse()) {
      clean = (await this.#attempt(errors, 'a binding failed to deactivate', () => unbindRecorded(container, binding))) && clean;
    }
    for (const dispose of this.disposers.splice(0).reverse()) await this.#attempt(errors, 'dispose failed', dispose);
    const module = this.module;
    if (module && (clean || !keepFailed)) await this.#attempt(errors, 'unloading its module failed', () => container.unloadAsync(module));
    return clean;
  }

  async #attempt(errors: unknown[], what: string, run: () => void | Promise<void>): Promise<boolean> {
    try {
      await run();
      return true;
    } catch (error) {
      errors.push(new PluginError(this.name, 'dispose-failed', `${what}: ${errorMessage(error)}`, { cause: error }));
      return false;
    }
  }
}
