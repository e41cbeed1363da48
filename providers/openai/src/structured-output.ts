import type { JsonSchema, JsonValue } from '@kosong/core';
import type { OutputFormat } from '@kosong/core/provider-kit';
import { toStrictJsonSchema } from 'openai/lib/transform';

/** A structured output's schema as an OpenAI API takes it, and whether it can be enforced strictly. */
export interface OpenAISchema {
  readonly schema: JsonSchema;
  /**
   * `true` when the schema fits the APIs' strict Structured Outputs (then `schema` is its strict
   * form: every object closed, every property listed as required — optional ones only where they
   * may be `null`); `false` when it does not (an optional property that cannot be `null`, an open
   * object, `allOf`, `not`, tuples, …): the schema then goes as it is, as a guide the API does not
   * enforce, and kosong's validation is what holds the answer to it.
   */
  readonly strict: boolean;
}

const prepared = new WeakMap<OutputFormat, OpenAISchema>();

/**
 * The schema of a structured output for OpenAI's APIs, made strict with the official SDK's own
 * `toStrictJsonSchema` when it can be (see {@link OpenAISchema.strict}). Once per output format.
 */
export function openAISchema(output: OutputFormat): OpenAISchema {
  let schema = prepared.get(output);
  if (schema === undefined) {
    try {
      schema = { schema: toStrictJsonSchema(output.schema as Parameters<typeof toStrictJsonSchema>[0]) as JsonSchema, strict: true };
    } catch {
      schema = { schema: output.schema, strict: false };
    }
    prepared.set(output, schema);
  }
  return schema;
}

/**
 * The Chat Completions `response_format` of a structured output (Chat Completions, Kimi and other
 * compatible servers): `{type: 'json_schema', json_schema: {name, description?, schema, strict}}`.
 */
export function responseFormat(output: OutputFormat): JsonValue {
  const { schema, strict } = openAISchema(output);
  const jsonSchema: Record<string, JsonValue> = { name: output.name };
  if (output.description !== undefined) jsonSchema['description'] = output.description;
  jsonSchema['schema'] = schema as JsonValue;
  jsonSchema['strict'] = strict;
  return { type: 'json_schema', json_schema: jsonSchema };
}

/**
 * The Responses API's `text.format` of a structured output:
 * `{type: 'json_schema', name, description?, schema, strict}`.
 */
export function responsesTextFormat(output: OutputFormat): JsonValue {
  const { schema, strict } = openAISchema(output);
  const format: Record<string, JsonValue> = { type: 'json_schema', name: output.name };
  if (output.description !== undefined) format['description'] = output.description;
  format['schema'] = schema as JsonValue;
  format['strict'] = strict;
  return format;
}
