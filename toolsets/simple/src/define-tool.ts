import type { JsonValue, ToolContext } from '@kosong/core';
import { $ZodAsyncError, safeParse, safeParseAsync, type $ZodIssue, type $ZodType, type output } from 'zod/v4/core';
import type { ArgumentCheck, CallableTool, ToolOutput, ValidationIssue } from './callable-tool.js';
import { deepFreeze } from './deep-freeze.js';
import { ToolDefinitionError } from './errors.js';
import { checkKnownOptions, checkNeedsApproval, type ApprovalOption } from './approval-option.js';
import { checkReplay, type ReplayOption } from './replay-option.js';
import { checkLimits, checkNameAndDescription, type ToolLimits } from './tool-limits.js';
import { formatJsonPath, stripPrototypeKeys } from '@kosong/core/json-schema';
import { zodToJsonSchema } from '@kosong/core/json-schema';

/** What {@link defineTool} needs: the model-facing name and description, a zod 4 schema, and the code. */
export interface ToolDefinition<Schema extends $ZodType> extends ToolLimits, ReplayOption, ApprovalOption<output<Schema>> {
  readonly name: string;
  readonly description: string;
  /** The arguments, as a zod 4 schema (classic `zod` or `zod/mini`); usually a `z.object(…)`. */
  readonly parameters: Schema;
  /**
   * Runs the tool with the parsed arguments (defaults applied, transforms run, unknown keys
   * stripped unless the schema is `.strict()`/`.loose()`). Return a {@link ToolOutput}.
   */
  execute(args: output<Schema>, context: ToolContext): ToolOutput | Promise<ToolOutput>;
}

/**
 * Defines a tool whose arguments are described and checked by a zod 4 schema. The JSON Schema the
 * model sees is generated once, here (see {@link zodToJsonSchema}); each call's arguments are
 * checked with the zod schema before `execute` runs, and `execute` gets the parsed, typed value.
 * Async refinements and transforms work (validation then runs asynchronously).
 *
 * @example
 * ```ts
 * const add = defineTool({
 *   name: 'add',
 *   description: 'Adds two numbers.',
 *   parameters: z.object({ a: z.number().describe('First'), b: z.number().default(0) }),
 *   execute: ({ a, b }) => String(a + b),
 *   replay: 'safe', // no side effect: an interrupted call may run again
 * });
 * ```
 * @throws ToolDefinitionError (a `TypeError`) for an invalid name, description, limit, `replay` or `needsApproval`, an option it does not know, or a schema that has no
 *   JSON Schema equivalent (`z.date()`, `z.bigint()`, `z.map()`, …).
 */
export function defineTool<Schema extends $ZodType>(definition: ToolDefinition<Schema>): CallableTool<output<Schema>> {
  const { name, description, parameters: schema } = definition;
  checkNameAndDescription(name, description);
  const limits = checkLimits(name, definition);
  checkKnownOptions(name, definition, DEFINITION_OPTIONS, 'a tool definition');
  const replay = checkReplay(name, definition.replay);
  const approval = checkNeedsApproval<output<Schema>>(name, definition.needsApproval);
  if (typeof schema !== 'object' || schema === null || !('_zod' in schema)) {
    throw new ToolDefinitionError(name, 'parameters must be a zod 4 schema (for a JSON Schema, use defineJsonSchemaTool)');
  }
  let parameters;
  try {
    parameters = deepFreeze(zodToJsonSchema(schema));
  } catch (error) {
    throw new ToolDefinitionError(name, `parameters cannot be converted to JSON Schema: ${(error as Error).message}`, { cause: error });
  }
  return Object.freeze({
    name,
    description,
    parameters,
    ...limits,
    ...replay,
    ...approval,
    validate: (args: JsonValue) => validateWithZod(schema, args),
    execute: (args: output<Schema>, context: ToolContext) => definition.execute(args, context),
  });
}

/** The options of a definition; any other is refused. */
const DEFINITION_OPTIONS: ReadonlySet<string> = new Set(['name', 'description', 'parameters', 'execute', 'timeoutMs', 'maxOutputChars', 'replay', 'needsApproval']);

function validateWithZod<Schema extends $ZodType>(
  schema: Schema,
  args: JsonValue,
): ArgumentCheck<output<Schema>> | Promise<ArgumentCheck<output<Schema>>> {
  let result;
  try {
    result = safeParse(schema, args);
  } catch (error) {
    if (!(error instanceof $ZodAsyncError)) throw error;
    return safeParseAsync(schema, args).then(toCheck);
  }
  return toCheck(result);
}

function toCheck<T>(result: { success: true; data: T } | { success: false; error: { issues: $ZodIssue[] } }): ArgumentCheck<T> {
  return result.success ? { ok: true, value: stripPrototypeKeys(result.data) } : { ok: false, issues: zodIssues(result.error.issues, []) };
}

/** Zod issues as validation issues: unrecognized keys one per key, union failures with what each option said. */
export function zodIssues(issues: readonly $ZodIssue[], base: readonly (string | number)[]): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  for (const issue of issues) {
    const path = [...base, ...issue.path.map((segment) => (typeof segment === 'symbol' ? String(segment) : segment))];
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) out.push({ path: [...path, key], message: 'Unrecognized key' });
    } else if (issue.code === 'invalid_union' && issue.errors.length > 0) {
      const options = issue.errors.map((branch) =>
        zodIssues(branch, [])
          .map((inner) => (inner.path.length === 0 ? inner.message : `${formatJsonPath(inner.path)}: ${inner.message}`))
          .join('; '),
      );
      out.push({ path, message: `${issue.message} (no option matched: ${options.join(' | ')})` });
    } else {
      out.push({ path, message: issue.message });
    }
  }
  return out;
}
