/**
 * `@kosong/core/json-schema`: JSON Schema helpers shared by the toolsets and structured output —
 * zod 4 schemas as the JSON Schema a model is shown ({@link zodToJsonSchema}), local `$ref`s inlined
 * ({@link derefJsonSchema}), and validation issues (ajv's, readable paths). Importing it loads zod;
 * the package root does not.
 *
 * @packageDocumentation
 */
export { zodToJsonSchema } from './zod-json-schema.js';
export { derefJsonSchema } from './deref-json-schema.js';
export { MAX_LISTED_ISSUES, ajvIssues, formatIssues, formatJsonPath, jsonPointerSegments, type SchemaIssue } from './schema-issues.js';
