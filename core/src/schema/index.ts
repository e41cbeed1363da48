/**
 * `@kosong/core/json-schema`: JSON Schema helpers shared by the toolsets and structured output —
 * zod 4 schemas as the JSON Schema a model is shown ({@link zodToJsonSchema}), local `$ref`s inlined
 * ({@link derefJsonSchema}), validation issues (ajv's, readable paths), and the rule for JSON a model
 * wrote ({@link checkParsedJson}, {@link stripPrototypeKeys}). Importing it loads zod;
 * the package root does not.
 *
 * @packageDocumentation
 */
export { zodToJsonSchema } from './zod-json-schema.js';
export { derefJsonSchema } from './deref-json-schema.js';
export { NUMBER_OUT_OF_RANGE, checkParsedJson, stripPrototypeKeys } from './parsed-json.js';
export { MAX_LISTED_ISSUES, ajvIssues, formatIssues, formatJsonPath, jsonPointerSegments, type SchemaIssue } from './schema-issues.js';
