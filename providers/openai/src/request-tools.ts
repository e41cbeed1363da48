import type { JsonSchema, Tool } from '@kosong/core';

import { ensurePropertyTypes } from './ensure-property-types.js';

/** A function tool as the Chat Completions API takes it. */
export interface FunctionToolDefinition {
  readonly type: 'function';
  readonly function: { readonly name: string; readonly description: string; readonly parameters: JsonSchema };
}

/** A Moonshot built-in tool (e.g. `$web_search`): the server runs it. */
export interface BuiltinToolDefinition {
  readonly type: 'builtin_function';
  readonly function: { readonly name: string };
}

/** `{type: 'function', function: {name, description, parameters}}` (kosong spec §7.1 `tool_to_openai`). */
export function toolToOpenAI(tool: Tool): FunctionToolDefinition {
  return { type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.parameters } };
}

/**
 * A tool as the Kimi API takes it (kosong spec §7.2): a name starting with `$` is a Moonshot built-in
 * (`{type: 'builtin_function', function: {name}}`); any other tool is a function whose parameter
 * schema gets the missing property types filled in ({@link ensurePropertyTypes}). The tool is not modified.
 */
export function toolToKimi(tool: Tool): FunctionToolDefinition | BuiltinToolDefinition {
  if (tool.name.startsWith('$')) return { type: 'builtin_function', function: { name: tool.name } };
  return { type: 'function', function: { name: tool.name, description: tool.description, parameters: ensurePropertyTypes(tool.parameters) } };
}
