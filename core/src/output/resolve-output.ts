import type { Ajv2020, ValidateFunction } from 'ajv/dist/2020.js';
import { DEFAULT_OUTPUT_NAME, type OutputFormat } from '../provider/output-format.js';
import { derefJsonSchema } from '../schema/deref-json-schema.js';
import { ajvIssues, formatJsonPath, jsonPointerSegments, type SchemaIssue } from '../schema/schema-issues.js';
import type { JsonSchema } from '../tooling/tool.js';
import { InvalidOutputSchemaError } from './output-errors.js';
import { isOutputSpec, isStandardSchema, type OutputOption, type StandardSchema, type StandardSchemaIssue } from './output-schema.js';

/** The outcome of validating a parsed output. */
export type OutputCheck = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly issues: readonly SchemaIssue[] };

/** A structured output option made ready: what the provider is asked for, and how the answer is checked. */
export interface ResolvedOutput {
  readonly format: OutputFormat;
  /** Whether the model is asked for `{"value": …}` because the schema's root is not an object. */
  readonly wrapped: boolean;
  /** Validates the parsed JSON (already unwrapped); may throw (a transform that throws, a stack overflow). */
  validate(value: unknown): OutputCheck | Promise<OutputCheck>;
}

const NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** Root keywords that make a schema with `type: 'object'` more than a plain object schema (APIs refuse them at the root). */
const NOT_PLAIN_ROOT = ['anyOf', 'oneOf', 'allOf', 'not', 'if', 'enum', 'const', '$ref'];
/** Keywords whose values are data, not schemas: a `$ref` key inside them is no reference. */
const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'examples']);

const resolved = new WeakMap<object, Promise<ResolvedOutput>>();

/**
 * Prepares a structured output option once per schema object (the result is cached): its JSON Schema
 * for the provider, and its validator. zod's JSON Schema converter and ajv are loaded here, on the
 * first use of structured output, never when the runtime is imported.
 *
 * @throws {InvalidOutputSchemaError} (as a rejection) for anything that cannot be used.
 */
export function resolveOutput(option: OutputOption): Promise<ResolvedOutput> {
  if ((typeof option !== 'object' && typeof option !== 'function') || option === null) {
    return Promise.reject(new InvalidOutputSchemaError(`expected a zod schema, a JSON Schema object or structuredOutput(…), got ${option === null ? 'null' : typeof option}`));
  }
  let ready = resolved.get(option);
  if (ready === undefined) {
    ready = build(option);
    resolved.set(option, ready);
    ready.catch(() => resolved.delete(option));
  }
  return ready;
}

async function build(option: OutputOption): Promise<ResolvedOutput> {
  const { schema, name, description } = isOutputSpec(option) ? option : { schema: option, name: undefined, description: undefined };
  if (name !== undefined && (typeof name !== 'string' || !NAME.test(name))) {
    throw new InvalidOutputSchemaError(`the name must be 1 to 64 letters, digits, "_" or "-", got ${JSON.stringify(name)}`);
  }
  if (description !== undefined && typeof description !== 'string') throw new InvalidOutputSchemaError('the description must be a string');
  const { json, validate } = await prepare(schema);
  const { schema: sent, wrapped } = asObjectRoot(json);
  const format: OutputFormat = Object.freeze({ type: 'json_schema', name: name ?? DEFAULT_OUTPUT_NAME, description, schema: deepFreeze(sent) });
  return Object.freeze({ format, wrapped, validate });
}

/** The schema's JSON Schema (dereferenced, without `$schema`) and its validator. */
async function prepare(schema: unknown): Promise<{ json: JsonSchema; validate: ResolvedOutput['validate'] }> {
  if (typeof schema === 'object' && schema !== null && '_zod' in schema && isStandardSchema(schema)) {
    const { zodToJsonSchema } = await import('../schema/zod-json-schema.js');
    let json: JsonSchema;
    try {
      json = zodToJsonSchema(schema as unknown as Parameters<typeof zodToJsonSchema>[0]);
    } catch (error) {
      throw new InvalidOutputSchemaError(`the zod schema has no JSON Schema equivalent: ${messageOf(error)}`, { cause: error });
    }
    return { json, validate: standardValidator(schema) };
  }
  if (isStandardSchema(schema)) {
    const input = schema['~standard'].jsonSchema?.input;
    if (typeof input !== 'function') {
      throw new InvalidOutputSchemaError(`a ${schema['~standard'].vendor} schema without a JSON Schema (Standard JSON Schema): use zod 4 or a JSON Schema`);
    }
    let json: JsonSchema;
    try {
      json = dereferenced(jsonCopy(input({ target: 'draft-2020-12' })));
    } catch (error) {
      throw InvalidOutputSchemaError.isInstance(error) ? error : new InvalidOutputSchemaError(`the ${schema['~standard'].vendor} schema's JSON Schema: ${messageOf(error)}`, { cause: error });
    }
    return { json, validate: standardValidator(schema) };
  }
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw new InvalidOutputSchemaError(`expected a zod schema, a JSON Schema object or structuredOutput(…), got ${Array.isArray(schema) ? 'an array' : typeof schema}`);
  }
  const copy = jsonCopy(schema);
  const validator = await compileJsonSchema(copy);
  let json: JsonSchema;
  try {
    json = dereferenced(copy);
  } catch (error) {
    throw new InvalidOutputSchemaError(messageOf(error), { cause: error });
  }
  return { json, validate: (value) => (validator(value) ? { ok: true, value } : { ok: false, issues: ajvIssues(validator.errors ?? []) }) };
}

/** A Standard Schema's `validate` as an output check, its issues as schema issues. */
function standardValidator(schema: StandardSchema): ResolvedOutput['validate'] {
  const check = (result: Awaited<ReturnType<StandardSchema['~standard']['validate']>>): OutputCheck =>
    result.issues === undefined ? { ok: true, value: result.value } : { ok: false, issues: result.issues.map(standardIssue) };
  return (value) => {
    const result = schema['~standard'].validate(value);
    return result instanceof Promise ? result.then(check) : check(result);
  };
}

function standardIssue(issue: StandardSchemaIssue): SchemaIssue {
  const path = (issue.path ?? []).map((segment) => {
    const key = typeof segment === 'object' && segment !== null ? segment.key : segment;
    return typeof key === 'number' ? key : String(key);
  });
  return { path, message: issue.message };
}

let sharedAjv: Ajv2020 | undefined;

/** Checks a JSON Schema against the draft 2020-12 meta-schema and compiles it (ajv, loaded now). */
async function compileJsonSchema(schema: JsonSchema): Promise<ValidateFunction> {
  if (sharedAjv === undefined) {
    const { Ajv2020: Ajv } = await import('ajv/dist/2020.js');
    sharedAjv ??= new Ajv({ allErrors: true, strict: false, validateFormats: false });
  }
  const ajv = sharedAjv;
  let valid: boolean;
  try {
    valid = ajv.validateSchema(schema) as boolean;
  } catch (error) {
    throw new InvalidOutputSchemaError(`it cannot be checked (only draft 2020-12 is supported): ${messageOf(error)}`, { cause: error });
  }
  if (!valid) {
    const problems = (ajv.errors ?? []).map((error) => `${formatJsonPath(jsonPointerSegments(error.instancePath))}: ${error.message ?? error.keyword}`);
    throw new InvalidOutputSchemaError(`not a valid JSON Schema (draft 2020-12): ${problems.join('; ')}`);
  }
  try {
    return ajv.compile(schema);
  } catch (error) {
    throw new InvalidOutputSchemaError(`it cannot be compiled: ${messageOf(error)}`, { cause: error });
  } finally {
    ajv.removeSchema(schema); // the validator keeps working; the instance forgets the schema (and its $id)
  }
}

/** A JSON copy of a schema (so later changes of the caller's object change nothing here). */
function jsonCopy(schema: unknown): JsonSchema {
  let copy: unknown;
  try {
    copy = JSON.parse(JSON.stringify(schema)) as unknown;
  } catch (error) {
    throw new InvalidOutputSchemaError(`it is not JSON: ${messageOf(error)}`, { cause: error });
  }
  if (typeof copy !== 'object' || copy === null || Array.isArray(copy)) throw new InvalidOutputSchemaError('a JSON Schema must be an object');
  return copy as JsonSchema;
}

/** The schema with its local `$ref`s inlined (recursive ones kept) and without `$schema`. */
function dereferenced(schema: JsonSchema): JsonSchema {
  const { $schema: _dialect, ...rest } = schema;
  return derefJsonSchema(rest);
}

/**
 * The schema the model is asked for: the schema itself when its root is a plain object schema, else
 * `{"value": <schema>}` (most APIs take only an object at the root), its definitions moved to the new
 * root and its references into itself pointed at `#/properties/value`.
 */
function asObjectRoot(schema: JsonSchema): { schema: JsonSchema; wrapped: boolean } {
  if (schema['type'] === 'object' && !NOT_PLAIN_ROOT.some((keyword) => keyword in schema)) return { schema, wrapped: false };
  const { $defs, definitions, ...inner } = schema;
  const wrapper: Record<string, unknown> = {
    type: 'object',
    properties: { value: repointRootReferences(inner) },
    required: ['value'],
    additionalProperties: false,
  };
  if ($defs !== undefined) wrapper['$defs'] = $defs;
  if (definitions !== undefined) wrapper['definitions'] = definitions;
  return { schema: wrapper, wrapped: true };
}

function repointRootReferences(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(repointRootReferences);
  if (typeof node !== 'object' || node === null) return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    let next: unknown;
    if (key === '$ref' && typeof value === 'string') next = repointed(value);
    else if (DATA_KEYWORDS.has(key)) next = value;
    else next = repointRootReferences(value);
    if (key === '__proto__') Object.defineProperty(out, key, { value: next, enumerable: true, writable: true, configurable: true });
    else out[key] = next;
  }
  return out;
}

function repointed(ref: string): string {
  if (ref === '#') return '#/properties/value';
  if (ref.startsWith('#/') && !ref.startsWith('#/$defs/') && !ref.startsWith('#/definitions/')) return `#/properties/value${ref.slice(1)}`;
  return ref;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
