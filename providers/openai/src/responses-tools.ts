import type { JsonSchema, Tool } from '@kosong/core';

/** A function tool as the Responses API takes it. */
export interface ResponsesFunctionTool {
  readonly type: 'function';
  readonly name: string;
  readonly description: string;
  readonly parameters: JsonSchema;
  readonly strict: boolean;
}

/**
 * `{type: 'function', name, description, parameters, strict}` (kosong spec §7.4; the Python original
 * always sends `strict: false`). With `strict: true` the API holds the model to the schema, which
 * must then follow the API's strict rules (every property required, `additionalProperties: false`).
 */
export function toolToResponses(tool: Tool, strict: boolean): ResponsesFunctionTool {
  return { type: 'function', name: tool.name, description: tool.description, parameters: tool.parameters, strict };
}
