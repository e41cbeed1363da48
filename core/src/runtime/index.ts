/**
 * `@kosong/core/runtime`: the step runtime without the kernel — the message model, the provider and
 * tool contracts, `generate`, `step`, `StepResult` and the hooks. It loads neither inversify nor zod
 * (zod is loaded when a message is first read from JSON), so a process that only runs steps starts
 * about as fast as Node itself. The package root (`@kosong/core`) exports all of this too, plus the
 * kernel and the agent loop.
 *
 * @packageDocumentation
 */
export * from '../message/parts.js';
export * from '../message/message.js';
export * from '../message/merge.js';
export * from '../message/freeze.js';
export * from '../message/json.js';

export * from '../provider/chat-provider.js';
export * from '../provider/token-usage.js';
export * from '../provider/errors.js';
export { IdleTimer } from '../provider/idle-timer.js';
export { redirectRefusal, sameOriginRedirects } from '../provider/same-origin-redirects.js';
export { dropRest, REST_BYTES, REST_MS } from '../provider/body-rest.js';
export { feedEveryLineEnd, type SseFeed } from '../provider/sse-line-ends.js';
export { errorChainMessages, retryAfterSeconds, transportFailureKind } from '../provider/transport-failures.js';
export * from '../provider/generation-options.js';
export * from '../provider/generation-option-errors.js';
export * from '../provider/secret-scrubbing.js';
export * from '../provider/output-format.js';
export { errorMarker, hasErrorMarker, markError } from '../error-marker.js';
export { checkKnownOptions, type KnownOptions } from '../known-options.js';

export * from '../tooling/tool.js';
export * from '../tooling/tool-result.js';
export * from '../tooling/tool-errors.js';
export * from '../tooling/toolset.js';
export * from '../tooling/arguments.js';
export * from '../tooling/approval.js';
export * from '../tooling/require-approval.js';
export * from '../tooling/replay-policy.js';

export { structuredOutput, type InferOutput, type OutputOption, type OutputSchema, type OutputSpec, type StandardSchema, type StandardSchemaIssue, type StandardSchemaResult } from '../output/output-schema.js';
export { InvalidOutputSchemaError, StructuredOutputError, type StructuredOutputErrorDetails, type StructuredOutputFailure } from '../output/output-errors.js';
export type { SchemaIssue } from '../schema/schema-issues.js';
export { generate, type GenerateOptions, type GenerateResult } from './generate.js';
export { step, type StepOptions, type StepResumption, type ToolDispatchMode } from './step.js';
export { StepResult } from './step-result.js';
export type { StepLedger } from './step-ledger.js';
export { abortableDelay } from './abort.js';
export * from './hooks/step-hooks.js';
export { writeHookErrorToStderr, type HookErrorHandler, type HookErrorReport, type HookFailureKind } from './hooks/hook-guard.js';
export { DEFAULT_CLEANUP_TIMEOUT_MS, DEFAULT_HOOK_TIMEOUT_MS, DEFAULT_MAX_HOOK_FAILURES } from './defaults.js';
