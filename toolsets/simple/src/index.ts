/**
 * `@kosong/toolset-simple`: tools defined in code for kosong.
 *
 * - {@link defineTool}: a tool whose arguments are a zod 4 schema (JSON Schema generated for the model,
 *   arguments parsed and typed before `execute`);
 * - {@link defineJsonSchemaTool}: a tool whose arguments are a JSON Schema (draft 2020-12, checked with ajv);
 * - {@link SimpleToolset}: runs such tools concurrently, with an optional concurrency limit, per-tool
 *   timeouts and an output cap, answering every bad call with an error result for the model;
 * - {@link combineToolsets}: one toolset over several, refusing duplicate tool names.
 *
 * @packageDocumentation
 */
export type { ApprovalCheck, ArgumentCheck, CallableTool, ToolOutput, ValidationIssue } from './callable-tool.js';
export { defineTool, type ToolDefinition } from './define-tool.js';
export { defineJsonSchemaTool, type JsonSchemaToolDefinition } from './define-json-schema-tool.js';
export { SimpleToolset, type AddToolOptions, type SimpleToolsetOptions } from './simple-toolset.js';
export { combineToolsets, type NamedToolset } from './combine-toolsets.js';
export type { ToolLimits } from './tool-limits.js';
export type { ReplayOption } from './replay-option.js';
export type { ApprovalOption, NeedsApproval } from './approval-option.js';
export { ToolDefinitionError, ToolNameConflictError, UnknownToolError } from './errors.js';
export { derefJsonSchema, zodToJsonSchema } from '@kosong/core/json-schema';
export { checkParsedJson, stripPrototypeKeys } from '@kosong/core/json-schema';
export { truncateOutput, truncationNote } from './output-limit.js';
export { formatIssues, formatJsonPath, MAX_LISTED_ISSUES } from '@kosong/core/json-schema';
export { describeReturnType, toolAborted, toolAbortedBeforeStart, toolTimedOut } from './tool-results.js';
