import type { JsonSchema, JsonValue, ToolContext } from '@kosong/core';
import { ajvIssues, checkParsedJson, formatJsonPath, jsonPointerSegments } from '@kosong/core/json-schema';
import type * as AjvModule from 'ajv/dist/2020.js';
import type { Ajv2020, ValidateFunction } from 'ajv/dist/2020.js';
import { createRequire } from 'node:module';
import type { ArgumentCheck, CallableTool, ToolOutput } from './callable-tool.js';
import { deepFreeze } from './deep-freeze.js';
import { ToolDefinitionError } from './errors.js';
import { checkKnownOptions, checkNeedsApproval, type ApprovalOption } from './approval-option.js';
import { checkReplay, type ReplayOption } from './replay-option.js';
import { checkLimits, checkNameAndDescription, type ToolLimits } from './tool-limits.js';

/** What {@link defineJsonSchemaTool} needs: the model-facing name and description, a JSON Schema, and the code. */
export interface JsonSchemaToolDefinition<Args> extends ToolLimits, ReplayOption, ApprovalOption<Args> {
  readonly name: string;
  readonly description: string;
  /** The arguments, as a JSON Schema (draft 2020-12). Sent to the model as given (a JSON copy). */
  readonly parameters: JsonSchema;
  /** Runs the tool with the arguments, once they matched the schema. Return a {@link ToolOutput}. */
  execute(args: Args, context: ToolContext): ToolOutput | Promise<ToolOutput>;
}

/**
 * Defines a tool whose arguments are described by a JSON Schema (draft 2020-12) and checked with
 * ajv, e.g. a schema that comes from configuration or another system. The schema is checked
 * against the draft 2020-12 meta-schema and compiled once, here.
 *
 * - `execute` gets the parsed JSON as it is (ajv applies no defaults and removes nothing), minus the
 *   keys that lead to a prototype (see {@link stripPrototypeKeys}); a number beyond the double range
 *   (`1e400`, which `JSON.parse` reads as `Infinity`) is an invalid argument, as for zod tools. `Args` is not checked against the schema by TypeScript: state it truthfully.
 * - All issues are reported to the model (ajv `allErrors`), at most 20 lines of them.
 * - `format` is an annotation only (as draft 2020-12 says by default): it is not validated.
 * - Unknown keywords are allowed (ajv non-strict mode), as the meta-schema allows them.
 * - The schema is sent to the model as given: its `$ref`s are not inlined (use
 *   {@link derefJsonSchema} first if the provider needs that).
 *
 * @typeParam Args - the type of the arguments the schema accepts; default: any JSON value.
 * @throws ToolDefinitionError (a `TypeError`) for an invalid name, description, limit, `replay` or `needsApproval`, an option it does not know, a schema that is not a JSON
 *   object, a schema that is not a valid draft 2020-12 JSON Schema, or one with unresolvable `$ref`s.
 */
export function defineJsonSchemaTool<Args = JsonValue>(definition: JsonSchemaToolDefinition<Args>): CallableTool<Args> {
  const { name, description } = definition;
  checkNameAndDescription(name, description);
  const limits = checkLimits(name, definition);
  checkKnownOptions(name, definition, DEFINITION_OPTIONS, 'a tool definition');
  const replay = checkReplay(name, definition.replay);
  const approval = checkNeedsApproval<Args>(name, definition.needsApproval);
  const parameters = deepFreeze(jsonCopy(name, definition.parameters));
  const validator = compile(name, parameters);
  return Object.freeze({
    name,
    description,
    parameters,
    ...limits,
    ...replay,
    ...approval,
    validate: (args: JsonValue): ArgumentCheck<Args> => {
      if (!validator(args)) return { ok: false, issues: ajvIssues(validator.errors ?? []) };
      // The rule of structured output and zod tools: a number beyond the double range (`1e400`, read as Infinity) is invalid; prototype keys go.
      const clean = checkParsedJson(args);
      return clean.ok ? { ok: true, value: clean.value as Args } : clean;
    },
    execute: (args: Args, context: ToolContext) => definition.execute(args, context),
  });
}

/** The options of a definition; any other is refused. */
const DEFINITION_OPTIONS: ReadonlySet<string> = new Set(['name', 'description', 'parameters', 'execute', 'timeoutMs', 'maxOutputChars', 'replay', 'needsApproval']);

let sharedAjv: Ajv2020 | undefined;

/**
 * One ajv instance for all tools (an instance costs tens of ms); each schema is removed from it once
 * compiled. ajv itself (some 80 CommonJS modules) is loaded with the first JSON-Schema tool, not
 * when this package is imported.
 */
function ajv(): Ajv2020 {
  if (sharedAjv === undefined) {
    const { Ajv2020: Ajv } = createRequire(import.meta.url)('ajv/dist/2020.js') as typeof AjvModule;
    sharedAjv = new Ajv({ allErrors: true, strict: false, validateFormats: false });
  }
  return sharedAjv;
}

function compile(name: string, schema: JsonSchema): ValidateFunction {
  const instance = ajv();
  let valid: boolean;
  try {
    valid = instance.validateSchema(schema) as boolean;
  } catch (error) {
    throw new ToolDefinitionError(name, `parameters cannot be checked: ${(error as Error).message} (only draft 2020-12 is supported)`, { cause: error });
  }
  if (!valid) {
    const problems = (instance.errors ?? []).map((error) => `${formatJsonPath(jsonPointerSegments(error.instancePath))}: ${error.message ?? error.keyword}`);
    throw new ToolDefinitionError(name, `parameters is not a valid JSON Schema (draft 2020-12): ${problems.join('; ')}`);
  }
  try {
    return instance.compile(schema);
  } catch (error) {
    throw new ToolDefinitionError(name, `parameters cannot be compiled: ${(error as Error).message}`, { cause: error });
  } finally {
    // Frees the instance of the schema (and its `$id`: two tools may use the same one); the validator keeps working.
    instance.removeSchema(schema);
  }
}

function jsonCopy(name: string, schema: unknown): JsonSchema {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw new ToolDefinitionError(name, 'parameters must be a JSON Schema object (for a zod schema, use defineTool)');
  }
  if ('_zod' in schema) throw new ToolDefinitionError(name, 'parameters is a zod schema: use defineTool');
  try {
    return JSON.parse(JSON.stringify(schema)) as JsonSchema;
  } catch (error) {
    throw new ToolDefinitionError(name, `parameters must be JSON: ${(error as Error).message}`, { cause: error });
  }
}
