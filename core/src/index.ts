/**
 * `@kosong/core`: the step runtime of kosong, as an application author uses it.
 *
 * - message model: parts, tool calls, messages, JSON (de)serialisation;
 * - providers as used: {@link ChatProvider}, {@link StreamedMessage}, {@link TokenUsage}, the errors a call throws;
 * - tools as an application's tools return them: {@link Tool}, {@link Toolset}, {@link ToolResult},
 *   `toolOk`/`toolError`, approvals;
 * - runtime: {@link generate}, {@link step}, {@link StepResult}, {@link StepHooks}, structured output;
 * - kernel and the plugin API: {@link Kernel}, {@link definePlugin}, {@link StepRunner}, tenants,
 *   {@link HookErrorSink}, service identifiers ({@link TenantId}, {@link KernelOptions}), the errors
 *   of tenant limits ({@link TenantLimitError}, {@link TenantBudgetExceededError}; the limits' and the
 *   usage ledger's types are in `@kosong/core/kernel`);
 * - the agent loop: {@link Agent}, {@link LinearContext}, approvals and retries.
 *
 * One face per audience, each a subpath: a provider is written with `@kosong/core/provider-kit`, a
 * toolset with `@kosong/core/toolset-kit`, a context store with `@kosong/core/context-kit`; the
 * kernel in full (inversify's decorators included) is `@kosong/core/kernel`, the step runtime alone
 * (neither inversify nor zod loaded, and the runtime's details) `@kosong/core/runtime`, test
 * servers' helpers `@kosong/core/testing`. The table is in core's README ("Entry points"); the
 * root's size is pinned (at most 150 names, `test/faces.spec.ts`).
 *
 * @packageDocumentation
 */
export * from './runtime/application-api.js';

// The kernel and the plugin API (the kernel in full, with inversify's decorators: `@kosong/core/kernel`).
export {
  ApprovalHandler,
  ExtensionPoint,
  HookErrorSink,
  Kernel,
  KernelError,
  KernelOptions,
  PluginError,
  StepRunner,
  TenantBudgetExceededError,
  TenantId,
  TenantLimitError,
  Tenants,
  UnknownProviderError,
  UnknownTenantError,
  definePlugin,
  type KernelAgentOptions,
  type Plugin,
  type PluginContext,
  type ProviderPluginFactory,
  type RunnerOptions,
  type RunnerStepOptions,
  type TenantDefinition,
  type TenantModuleContext,
} from './kernel/index.js';

export {
  Agent,
  DEFAULT_MAX_STEPS,
  type AgentEvent,
  type AgentRetry,
  type AgentOptions,
  type AgentResumeOptions,
  type AgentRunOptions,
  type AgentStopReason,
  type AgentTurn,
  type AgentTurnResult,
  type StepFunction,
} from './agent/agent.js';
export type { AgentContext, ContextRestoreReport } from './agent/context.js';
export { CompactionError, providerSummarizer, type CompactionOptions } from './agent/compaction.js';
export { pendingApprovals, type PendingApproval, type PendingStep } from './agent/pending-step.js';
export { ApprovalPendingError, NoPendingApprovalError, ResumeConflictError } from './agent/approval-errors.js';
export { LinearContext, type LinearContextOptions, type RestoreReport } from './agent/linear-context.js';
export { ContextCorruptedError, ContextFileError } from './agent/context-errors.js';
export { defaultRetryPolicy, isRetryableError, retryDelayMs, type RetryPolicy } from './agent/retry.js';
