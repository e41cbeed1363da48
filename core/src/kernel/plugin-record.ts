import type { Container, ContainerModule, ServiceIdentifier } from 'inversify';
import type { ChatProvider } from '../provider/chat-provider.js';
import type { Toolset } from '../tooling/toolset.js';
import { unbindRecorded, type RawTarget, type RecordedBinding } from './binding-recorder.js';
import type { Contribution } from './contribution.js';
import type { Disposal, DisposalSite, ModuleDeactivations } from './disposal.js';
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
  /** The classes and aliases it bound identifiers to through the raw module API (what a class it binds may inject). */
  readonly rawTargets = new Map<ServiceIdentifier, RawTarget[]>();
  /** The extension points it opened (`defineExtensionPoint`). */
  readonly extensionPoints: (symbol | string)[] = [];
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
   * `@preDestroy` run, awaited, one binding at a time, then the module deactivation handlers this
   * started), then its `onDispose` callbacks, then its module (its activation and deactivation
   * handlers). Each is awaited within the disposal's deadline; a failure is reported by the disposal
   * (naming the plugin and the service) and the rest still runs.
   *
   * A raw binding whose deactivation failed (or is still running) stays bound, so that it is not
   * deactivated twice: when `keepFailed` (kernel disposal), the module is then not unloaded either
   * (inversify would try it again). Returns whether every raw binding was deactivated.
   */
  async teardown(container: Container, scopes: Iterable<ServiceScope>, disposal: Disposal, deactivations: ModuleDeactivations, keepFailed: boolean): Promise<boolean> {
    const mine = new Set<Contribution>(this.contributions);
    for (const scope of scopes) await scope.deactivate(disposal, (c) => mine.has(c));
    let clean = true;
    for (const binding of this.bindings.splice(0).reverse()) {
      const site = this.#site(binding.service, 'deactivation');
      clean = (await deactivations.around(disposal, undefined, () => disposal.run(site, () => unbindRecorded(container, binding)))) && clean;
    }
    const disposers = this.disposers.splice(0);
    for (let i = disposers.length - 1; i >= 0; i--) await disposal.run(this.#site(`onDispose #${i + 1}`, 'onDispose'), disposers[i]!);
    const module = this.module;
    if (module && (clean || !keepFailed)) {
      await deactivations.around(disposal, undefined, () => disposal.run(this.#site('its module', 'unload'), () => container.unloadAsync(module)));
    }
    return clean;
  }

  #site(service: string, hook: string): DisposalSite {
    return { plugin: this.name, tenant: undefined, service, hook };
  }
}
