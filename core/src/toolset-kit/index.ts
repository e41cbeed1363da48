/**
 * `@kosong/core/toolset-kit`: what a toolset is written with — a {@link Toolset} that dispatches
 * the model's calls itself (`@kosong/toolset-simple`, `@kosong/toolset-mcp`), rather than the tools
 * an application hands to one.
 *
 * - the tool contract, as the root has it: {@link Tool}, {@link Toolset}, {@link ToolContext},
 *   {@link ToolResult}, `toolOk` / `toolError`, display blocks, approvals, the replay policy;
 * - the error results a toolset returns instead of throwing: `toolNotFound`, `toolParseError`,
 *   `toolValidateError`, `toolRuntimeError`, `toolCancelled`, `toolDenied`, `toolInterrupted`,
 *   `toolAwaitingApproval`, `toolInvalidReturn`, `toolNotExecuted`, `toolNotRecorded`, and
 *   {@link describeError} (an error's message for one);
 * - arguments: {@link parseToolArguments} (a call's JSON arguments, bounded by
 *   `MAX_TOOL_ARGUMENTS_LENGTH`); checks: `isToolResult`, `isToolReturnValue`, `isReplayPolicy`,
 *   `replayPolicyOf` (a tool's declared policy, `DEFAULT_REPLAY_POLICY` without one);
 * - for a package's own errors and options: `errorMarker` / `markError` / `hasErrorMarker` (an
 *   `isInstance` that works across duplicated package copies) and {@link checkKnownOptions}.
 *
 * It loads neither inversify nor zod. The message model comes from `@kosong/core`.
 *
 * @packageDocumentation
 */
export * from '../tooling/tool.js';
export * from '../tooling/tool-result.js';
export * from '../tooling/tool-errors.js';
export * from '../tooling/toolset.js';
export * from '../tooling/arguments.js';
export * from '../tooling/approval.js';
export * from '../tooling/require-approval.js';
export * from '../tooling/replay-policy.js';
export { errorMarker, hasErrorMarker, markError } from '../error-marker.js';
export { checkKnownOptions, type KnownOptions } from '../known-options.js';
