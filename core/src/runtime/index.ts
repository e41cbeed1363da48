/**
 * `@kosong/core/runtime`: the step runtime without the kernel and the agent loop. It loads neither
 * inversify nor zod (zod is loaded when a message is first read from JSON), so a process that only
 * runs steps starts about as fast as Node itself.
 *
 * - what the package root (`@kosong/core`) has of the step runtime — the message model, the
 *   provider and tool contracts as an application uses them, `generate`, `step`, `StepResult`, the
 *   hooks — the very same bindings (`application-api.ts`, shared with the root);
 * - the runtime's own details, which an application does not call: the hooks' defaults
 *   (`DEFAULT_HOOK_TIMEOUT_MS`, `DEFAULT_CLEANUP_TIMEOUT_MS`, `DEFAULT_MAX_HOOK_FAILURES`),
 *   `asNamedHooks`, the hook names and the scopes of `runInContext`, the default hook-error handler
 *   and sink (`writeHookErrorToStderr`, `stderrHookErrorSink`, with `isDisposalErrorReport`),
 *   `abortableDelay`, `freezePart` / `freezeJson` (how events are frozen), and the
 *   {@link StepLedger} a step writes its tool calls to, the `TimeoutBudget` names (which budget a
 *   `TimeoutBudgetError` names) and `checkTimeoutBudgets` (their check, for what carries them); the result types of a Standard Schema's
 *   `validate` (`StandardSchemaResult`, `StandardSchemaIssue`).
 *
 * @packageDocumentation
 */
export * from './application-api.js';
export { asNamedHooks, type RequestScope, type StepHookName, type ToolScope, type TurnScope } from './hooks/step-hooks.js';
export { writeHookErrorToStderr, type HookFailureKind } from './hooks/hook-guard.js';
export { isDisposalErrorReport, stderrHookErrorSink, type DisposalErrorReport } from '../kernel/hook-error-sink.js';
export { DEFAULT_CLEANUP_TIMEOUT_MS, DEFAULT_HOOK_TIMEOUT_MS, DEFAULT_MAX_HOOK_FAILURES } from './defaults.js';
export { abortableDelay } from './abort.js';
export { freezeJson, freezePart } from '../message/freeze.js';
export type { StepLedger } from './step-ledger.js';
export { checkTimeoutBudgets, type TimeoutBudget } from './timeout-budgets.js';
export type { StandardSchemaIssue, StandardSchemaResult } from '../output/output-schema.js';
export type { StepResumption, ToolDispatchMode } from './step.js';
export type { StructuredOutputErrorDetails } from '../output/output-errors.js';
