import { UnsupportedOutputError, type JsonSchema, type JsonValue } from '@kosong/core';
import type { OutputFormat } from '@kosong/core/provider-kit';
import { transformJSONSchema } from '@anthropic-ai/sdk/lib/transform-json-schema';

const prepared = new WeakMap<OutputFormat, JsonValue>();

/**
 * The Messages API's `output_config.format` of a structured output: `{type: 'json_schema', schema}`,
 * the schema in the subset the API constrains decoding with, made by the official SDK's own
 * `transformJSONSchema`: every object closed (`additionalProperties: false`), and the keywords the
 * API does not take (numeric and length bounds, most formats, `minItems` above 1, …) moved into the
 * description, where the model reads them; kosong's validation still holds the answer to all of
 * them. Once per output format.
 *
 * @throws {UnsupportedOutputError} for a schema the API cannot take: an open object (a map:
 * `additionalProperties` other than `false`, or `patternProperties`), a recursive schema, or a node
 * without a type (e.g. `z.any()`, `z.unknown()`).
 */
export function outputConfigFormat(provider: string, output: OutputFormat): JsonValue {
  let format = prepared.get(output);
  if (format === undefined) {
    const open = openObjectPath(output.schema, '');
    if (open !== undefined) {
      throw new UnsupportedOutputError(provider, `the Messages API takes only closed objects (additionalProperties: false), but ${open || 'the root'} is open (a map)`);
    }
    // Local references are inlined before a provider sees a schema, except recursive ones.
    if (JSON.stringify(output.schema).includes('"$ref"')) {
      throw new UnsupportedOutputError(provider, 'the Messages API takes no recursive schema');
    }
    let schema: JsonSchema;
    try {
      schema = transformJSONSchema(output.schema as Record<string, unknown>) as JsonSchema;
    } catch (error) {
      throw new UnsupportedOutputError(provider, `the schema cannot be sent to the Messages API: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    format = { type: 'json_schema', schema: schema as JsonValue };
    prepared.set(output, format);
  }
  return format;
}

/** The JSON Pointer of the first object schema that allows keys it does not list, if any. */
function openObjectPath(node: unknown, pointer: string): string | undefined {
  if (Array.isArray(node)) {
    for (const [index, item] of node.entries()) {
      const found = openObjectPath(item, `${pointer}/${index}`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (typeof node !== 'object' || node === null) return undefined;
  const schema = node as Record<string, unknown>;
  if ('patternProperties' in schema || (schema['additionalProperties'] !== undefined && schema['additionalProperties'] !== false)) return pointer;
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'enum' || key === 'const' || key === 'default' || key === 'examples') continue;
    const found = openObjectPath(value, `${pointer}/${key}`);
    if (found !== undefined) return found;
  }
  return undefined;
}
