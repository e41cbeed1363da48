/**
 * `@kosong/core/kernel`: the kernel in full, for plugin authors — plugins, scopes (the kernel's and
 * one per tenant), step runners; what the package root has of it (`Kernel`, `definePlugin`,
 * `PluginContext`, `StepRunner`, tenants, `HookErrorSink`, `ApprovalHandler`, `ExtensionPoint`, the
 * kernel's errors) plus inversify's decorators, the binding options' types (`ServiceClass`,
 * `ContributionScope`, `ServiceBindingOptions`, `ProviderBindingOptions`), `ProviderPluginFactory`,
 * the hook-error sink's pieces (`stderrHookErrorSink`, `isDisposalErrorReport`), `PluginFailure`,
 * tenant limits and the usage ledger (`TenantLimits`, `TenantLimitError`,
 * `TenantBudgetExceededError`, `UsageLedger`, `MemoryUsageLedger`, `usageRows`, `PriceTable`, the token estimate;
 * the seam of shared limit stores: `LimitStore`, `CapGate`, `Pacer`, `RatePacer`),
 * and, for a plugin package's own errors and options, `errorMarker` / `markError` /
 * `hasErrorMarker` and `checkKnownOptions`.
 *
 * Built on inversify; it loads `reflect-metadata` once, so that decorated classes (`@injectable()`,
 * `@inject(…)`) work without the user importing it — as long as `@kosong/core` (or this entry) is
 * imported before they are defined.
 *
 * @packageDocumentation
 */
import { createRequire } from 'node:module';

// Required rather than imported: importing a CommonJS module makes Node scan all of its source for
// its exports first (a noticeable part of importing @kosong/core); this module exports nothing.
createRequire(import.meta.url)('reflect-metadata');

/**
 * Inversify's decorators, re-exported so that a plugin package can depend on `@kosong/core` alone and
 * always decorates with the same inversify the kernel resolves with (loaded when first used).
 */
export { inject, injectable, injectFromBase, multiInject, named, optional, postConstruct, preDestroy, tagged, unmanaged } from './inversify.js';

export { Kernel, type KernelAgentOptions, type RunnerOptions } from './kernel.js';
export { KernelOptions } from './kernel-options.js';
export { definePlugin, type Plugin, type PluginContext, type ProviderBindingOptions, type ServiceBindingOptions } from './plugin.js';
export type { ContributionScope, ServiceClass } from './contribution.js';
export { ExtensionPoint } from './extension-point.js';
export type { ProviderPluginFactory } from './provider-catalog.js';
export { StepRunner, type RunnerStepOptions } from './step-runner.js';
export { Tenants, type TenantDefinition, type TenantModuleContext } from './tenants.js';
export { TenantId } from './tenant-id.js';
export { HookErrorSink, isDisposalErrorReport, stderrHookErrorSink, type DisposalErrorReport } from './hook-error-sink.js';
export { ApprovalHandler } from './approval-handler.js';
export { KernelError, PluginError, UnknownProviderError, UnknownTenantError, type PluginFailure } from './errors.js';
export {
  DEFAULT_LIMIT_MAX_WAIT_MS,
  type BudgetPeriod,
  type LimitPolicy,
  type TenantBudget,
  type TenantLimits,
} from '../governance/tenant-limits.js';
export {
  TenantBudgetExceededError,
  TenantLimitError,
  type TenantBudgetExceededErrorFields,
  type TenantLimitErrorFields,
  type TenantLimitName,
} from '../governance/limit-errors.js';
export {
  DAY_MS,
  MemoryUsageLedger,
  checkQuery,
  queryDays,
  usageRows,
  type UsageBucket,
  type UsageGroupKey,
  type UsageLedger,
  type UsageQuery,
  type UsageRecord,
  type UsageRow,
} from '../governance/usage-ledger.js';
export { costOf, UsagePricing, type ModelPrice, type PriceTable } from '../governance/pricing.js';
export { CHARS_PER_TOKEN, estimateRequestTokens, MEDIA_PART_TOKENS } from '../governance/token-estimate.js';
export type { CapGate, CapKind, LimitStore, Pacer, PaceKind, SharedLimits } from '../governance/limit-store.js';
export { PACE_WINDOW_SECONDS, RatePacer, type PaceLimiter, type PaceRefusal } from '../governance/rate-pacer.js';
export { errorMarker, hasErrorMarker, markError } from '../error-marker.js';
export { checkKnownOptions, type KnownOptions } from '../known-options.js';
