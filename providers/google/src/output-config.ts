import type { OutputFormat } from '@kosong/core/provider-kit';
import type { GenerateContentConfig } from '@google/genai';

/**
 * The request config with a structured output laid over it: `responseMimeType: 'application/json'`
 * and the JSON Schema as `responseJsonSchema` (Gemini's own `responseSchema`, an OpenAPI subset, is
 * dropped: the two cannot go together). The API takes a subset of JSON Schema (types, properties,
 * `required`, `enum`, `items`, `anyOf`, `$ref`/`$defs`, bounds, formats…); a schema it refuses is a
 * 400, an `APIStatusError`. Without `output`, the config as it is.
 */
export function layOutputFormat(config: GenerateContentConfig, output: OutputFormat | undefined): GenerateContentConfig {
  if (output === undefined) return config;
  const { responseSchema: _replaced, ...rest } = config;
  return { ...rest, responseMimeType: 'application/json', responseJsonSchema: output.schema };
}
