/**
 * The step runtime as an application uses it: the names the package root (`@kosong/core`) and
 * `@kosong/core/runtime` share. A name belongs here when an application author calls or names it
 * (a message, a step, a hook, a tool's result, an error to catch); what only a provider, a toolset
 * or a context store is written with belongs in its kit (`provider-kit`, `toolset-kit`,
 * `context-kit`), the runtime's own details in `runtime/index.ts`. The root's size is pinned by
 * `test/faces.spec.ts`.
 *
 * @module
 */
// The message model (how a stream's parts merge, and the rest of it: `@kosong/core/provider-kit`).
export { audioURLPart, imageURLPart, textPart, thinkPart, toolCall, toolCallPart, videoURLPart } from '../message/parts.js';
export type { AudioURLPart, ContentPart, ImageURLPart, JsonObject, JsonValue, StreamedMessagePart, TextPart, ThinkPart, ToolCall, ToolCallPart, VideoURLPart } from '../message/parts.js';
export { createMessage, extractText, type Message, type Role } from '../message/message.js';
export { MessageValidationError, messageFromJSON, messageToJSON, type MessageValidationIssue } from '../message/json.js';

// Providers as an application uses them (a provider is written with `@kosong/core/provider-kit`).
export { ChatProvider, type FinishReason, type StreamedMessage, type ThinkingEffort } from '../provider/chat-provider.js';
export { addUsage, inputTokens, tokenUsage, totalTokens, type TokenUsage } from '../provider/token-usage.js';
export { APIConnectionError, APIEmptyResponseError, APIStatusError, APITimeoutError, ChatProviderError } from '../provider/errors.js';
export type { GenerationOptions, ToolChoice } from '../provider/generation-options.js';
export * from '../provider/generation-option-errors.js';
export { UnsupportedOutputError } from '../provider/output-format.js';

// Tools as an application's tools return them (a toolset is written with `@kosong/core/toolset-kit`).
export type { JsonSchema, Tool } from '../tooling/tool.js';
export { toolError, toolOk, type DisplayBlock, type ToolResult, type ToolReturnValue } from '../tooling/tool-result.js';
export * from '../tooling/toolset.js';
export * from '../tooling/approval.js';
export * from '../tooling/require-approval.js';
export type { ReplayPolicy } from '../tooling/replay-policy.js';

export { structuredOutput, type InferOutput, type OutputOption, type OutputSchema, type OutputSpec, type StandardSchema } from '../output/output-schema.js';
export { InvalidOutputSchemaError, StructuredOutputError, type StructuredOutputFailure } from '../output/output-errors.js';
export type { SchemaIssue } from '../schema/schema-issues.js';
export { generate, type GenerateOptions, type GenerateResult } from './generate.js';
export { step, type StepOptions } from './step.js';
export { StepResult } from './step-result.js';
export { TimeoutBudgetError, type TimeoutBudgets } from './timeout-budgets.js';
export { StepHooks, type ContextScope, type NamedStepHooks, type StepEventContext } from './hooks/step-hooks.js';
export type { ApprovalDecisionEvent, ApprovalRequestEvent, CleanupEvent, PartEvent, ProviderSwitchEvent, RetryEvent, StepEndEvent, StepStartEvent, ToolCallEvent, ToolResultEvent } from './hooks/step-hooks.js';
export type { HookErrorHandler, HookErrorReport } from './hooks/hook-guard.js';
