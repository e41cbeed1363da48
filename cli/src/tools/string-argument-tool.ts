import type { JsonSchema, JsonValue, ReplayPolicy, ToolContext } from '@kosong/core';
import type { ArgumentCheck, CallableTool, ToolOutput, ValidationIssue } from '@kosong/toolset-simple';

/** One string argument of a built-in tool. */
export interface StringArgument {
  /** What the model is told about it. */
  readonly description?: string;
  /** Its value when the model leaves it out; without a default the argument is required. */
  readonly default?: string;
}

/** What {@link defineStringArgumentTool} needs: the model-facing name and description, the arguments, the code. */
export interface StringArgumentToolDefinition<Name extends string> {
  readonly name: string;
  readonly description: string;
  /** The arguments by name: each a string. */
  readonly parameters: { readonly [name in Name]: StringArgument };
  /** Overrides the toolset's timeout for one call, in ms. */
  readonly timeoutMs?: number;
  /**
   * Whether an interrupted call (its process killed while it ran) may run again when its step is
   * completed: `'safe'` for tools that only read; default `'never'` (see `ReplayPolicy` in `@kosong/core`).
   */
  readonly replay?: ReplayPolicy;
  /** Runs the tool with the arguments, once they are checked. */
  execute(args: { readonly [name in Name]: string }, context: ToolContext): ToolOutput | Promise<ToolOutput>;
}

/**
 * A tool whose arguments are a few named strings, as every built-in tool of the CLI takes: its JSON
 * Schema is written out here and its arguments checked by a few lines of code. It is what
 * `defineTool` (zod) or `defineJsonSchemaTool` (ajv) would do for such arguments, without loading
 * either library when the CLI starts (zod or ajv took tens of milliseconds of each start).
 *
 * `execute` gets the declared arguments only (others are dropped, as a zod object drops them); a
 * missing argument takes its default; an argument that is not a string, a missing required one, or
 * arguments that are not a JSON object are issues the model is told about.
 */
export function defineStringArgumentTool<Name extends string>(definition: StringArgumentToolDefinition<Name>): CallableTool<{ readonly [name in Name]: string }> {
  const declared = Object.entries<StringArgument>(definition.parameters);
  const properties = Object.fromEntries(
    declared.map(([name, argument]) => [
      name,
      { type: 'string', ...(argument.description === undefined ? {} : { description: argument.description }), ...(argument.default === undefined ? {} : { default: argument.default }) },
    ]),
  );
  const required = declared.filter(([, argument]) => argument.default === undefined).map(([name]) => name);
  const parameters: JsonSchema = { type: 'object', properties, ...(required.length === 0 ? {} : { required }) };
  return Object.freeze({
    name: definition.name,
    description: definition.description,
    parameters,
    ...(definition.timeoutMs === undefined ? {} : { timeoutMs: definition.timeoutMs }),
    ...(definition.replay === undefined ? {} : { replay: definition.replay }),
    validate: (args: JsonValue): ArgumentCheck<{ readonly [name in Name]: string }> => {
      if (typeof args !== 'object' || args === null || Array.isArray(args)) return { ok: false, issues: [{ path: [], message: `Invalid input: expected object, received ${kindOf(args)}` }] };
      const given = args as { readonly [key: string]: JsonValue };
      const value: Record<string, string> = {};
      const issues: ValidationIssue[] = [];
      for (const [name, argument] of declared) {
        const argumentValue = Object.hasOwn(given, name) ? given[name] : undefined;
        if (typeof argumentValue === 'string') value[name] = argumentValue;
        else if (argumentValue === undefined && argument.default !== undefined) value[name] = argument.default;
        else issues.push({ path: [name], message: `Invalid input: expected string, received ${kindOf(argumentValue)}` });
      }
      return issues.length === 0 ? { ok: true, value: value as { readonly [name in Name]: string } } : { ok: false, issues };
    },
    execute: definition.execute,
  });
}

/** How a JSON value's kind is named in an issue. */
function kindOf(value: JsonValue | undefined): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}
