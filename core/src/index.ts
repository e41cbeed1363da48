/**
 * `@kosong/core`: the step runtime of kosong.
 *
 * - message model: parts, tool calls, messages, merge rules ({@link mergePart}), JSON (de)serialisation;
 * - provider contract: {@link ChatProvider}, {@link StreamedMessage}, {@link TokenUsage}, provider errors;
 * - tool contract: {@link Tool}, {@link Toolset}, {@link ToolResult}, `toolOk`/`toolError`, error results;
 * - runtime: {@link generate}, {@link step}, {@link StepResult}, {@link StepHooks};
 * - kernel: {@link Kernel}, {@link definePlugin}, {@link StepRunner}, tenants, {@link HookErrorSink},
 *   service identifiers ({@link TenantId}, {@link KernelOptions}).
 *
 * Everything but the kernel and the agent loop is also exported by `@kosong/core/runtime`, an entry
 * that loads neither inversify nor zod (see `runtime/index.ts`).
 *
 * @packageDocumentation
 */
export * from './message/parts.js';
export * from './message/message.js';
export * from './message/merge.js';
export * from './message/freeze.js';
export * from './message/json.js';

export * from './provider/chat-provider.js';
export * from './provider/token-usage.js';
export * from './provider/errors.js';
// Provider-author helpers (to leave the root, issue 22 part 5): provider packages import these from
// `@kosong/core/provider-kit`, which has them and the rest of what a provider is written with.
export { IdleTimer } from './provider/idle-timer.js';
export { redirectRefusal, sameOriginRedirects } from './provider/same-origin-redirects.js';
export { dropRest, REST_BYTES, REST_MS } from './provider/body-rest.js';
export { feedEveryLineEnd, type SseFeed } from './provider/sse-line-ends.js';
export { errorChainMessages, retryAfterSeconds, transportFailureKind } from './provider/transport-failures.js';
export * from './provider/generation-options.js';
export * from './provider/generation-option-errors.js';
export * from './provider/secret-scrubbing.js';
export * from './provider/output-format.js';
export { errorMarker, hasErrorMarker, markError } from './error-marker.js';
export { checkKnownOptions, type KnownOptions } from './known-options.js';

export * from './tooling/tool.js';
export * from './tooling/tool-result.js';
export * from './tooling/tool-errors.js';
export * from './tooling/toolset.js';
export * from './tooling/arguments.js';
export * from './tooling/approval.js';
export * from './tooling/require-approval.js';
export * from './tooling/replay-policy.js';

export { structuredOutput, type InferOutput, type OutputOption, type OutputSchema, type OutputSpec, type StandardSchema, type StandardSchemaIssue, type StandardSchemaResult } from './output/output-schema.js';
export { InvalidOutputSchemaError, StructuredOutputError, type StructuredOutputErrorDetails, type StructuredOutputFailure } from './output/output-errors.js';
export type { SchemaIssue } from './schema/schema-issues.js';
export { generate, type GenerateOptions, type GenerateResult } from './runtime/generate.js';
export { step, type StepOptions, type StepResumption, type ToolDispatchMode } from './runtime/step.js';
export type { StepLedger } from './runtime/step-ledger.js';
export { StepResult } from './runtime/step-result.js';
export { abortableDelay } from './runtime/abort.js';
export * from './runtime/hooks/step-hooks.js';
export { writeHookErrorToStderr, type HookErrorHandler, type HookErrorReport, type HookFailureKind } from './runtime/hooks/hook-guard.js';
export { DEFAULT_CLEANUP_TIMEOUT_MS, DEFAULT_HOOK_TIMEOUT_MS, DEFAULT_MAX_HOOK_FAILURES } from './runtime/defaults.js';

export * from './kernel/index.js';

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
export { pendingApprovals, type PendingApproval, type PendingStep } from './agent/pending-step.js';
export { PENDING_STEP_ROLE, STEP_RESUMED_ROLE, pendingStepFromJSON, pendingStepToJSON, toolResultFromJSON, toolResultToJSON } from './agent/pending-step-json.js';
export { ApprovalPendingError, NoPendingApprovalError, ResumeConflictError } from './agent/approval-errors.js';
export { LinearContext, type LinearContextOptions, type RestoreReport } from './agent/linear-context.js';
export {
  MemoryCallLedger,
  OpenStepState,
  stepLedgerOf,
  type CallLedger,
  type CallOutcomeRecord,
  type CallRecord,
  type CallStartRecord,
  type LedgerCall,
  type OpenStep,
  type RecordStartOptions,
} from './agent/call-ledger.js';
export { CALL_SETTLED_ROLE, CALL_STARTED_ROLE, callRecordFromJSON, callRecordToJSON, isCallRecordJSON } from './agent/ledger-json.js';
export { SessionLock, type SessionLockOptions } from './agent/session-lock.js';
export * from './agent/context-errors.js';
export { defaultRetryPolicy, isRetryableError, retryDelayMs, type RetryPolicy } from './agent/retry.js';
export { toolResultToMessage } from './agent/tool-message.js';
