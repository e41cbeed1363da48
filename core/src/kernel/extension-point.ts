/**
 * An extension point a plugin opened with `ctx.defineExtensionPoint(id)`, and what other plugins
 * contributed to it with `ctx.contribute(id, …)` — Theia's `ContributionProvider`, without raw
 * inversify. The plugin that opened it gets it back from `defineExtensionPoint`; its classes inject it
 * with `@inject(ExtensionPoint) @named(id)`.
 *
 * @example
 * export const Formatter = Symbol('Formatter');
 * export interface Formatter { format(text: string): string }
 * const formats = definePlugin({
 *   name: 'formats',
 *   setup(ctx) {
 *     const formatters = ctx.defineExtensionPoint<Formatter>(Formatter);
 *     ctx.bindHooks({ onStepEnd: (e) => formatters.contributions(e.tenant).forEach((f) => f.format('…')) });
 *   },
 * });
 * const upper = definePlugin({ name: 'upper', requires: ['formats'], setup: (ctx) => ctx.contribute(Formatter, { format: (t) => t.toUpperCase() }) });
 */
export interface ExtensionPoint<T extends object> {
  /** Its service identifier (what contributions are bound to). */
  readonly id: symbol | string;
  /** The plugin that opened it. */
  readonly plugin: string;
  /**
   * Its contributions, in registration order (plugins used after it was opened included), as the
   * scope of `tenant` (without one: the kernel's) has them — each created where its declared scope
   * says; tenant-only ones left out in the kernel's scope. Resolved once per scope, until the next
   * `use` or the tenant's redefinition.
   *
   * @throws {UnknownTenantError} for a tenant that is not defined (or being removed);
   * {@link PluginError} if a contribution cannot be created for the scope.
   */
  contributions(tenant?: string): readonly T[];
}

/** Service identifier of {@link ExtensionPoint} (inject it `@named` by the point's id). */
export const ExtensionPoint: unique symbol = Symbol.for('kosong.ExtensionPoint');
