/**
 * The tenant of the scope a service is resolved in: the tenant's id in a tenant's scope, `undefined`
 * in the kernel's. A class that injects it is created once per tenant.
 *
 * @example
 * @injectable()
 * class TenantFiles implements Toolset {
 *   constructor(@inject(TenantId) private readonly tenant: TenantId) {}
 * }
 */
export type TenantId = string | undefined;

/** Service identifier of {@link TenantId}. */
export const TenantId: unique symbol = Symbol.for('kosong.TenantId');
