import type { JsonSchema } from '../tooling/tool.js';

/** One issue a Standard Schema reports (see {@link StandardSchema}). */
export interface StandardSchemaIssue {
  readonly message: string;
  readonly path?: readonly (PropertyKey | { readonly key: PropertyKey })[] | undefined;
}

/** What a Standard Schema's `validate` returns: the (possibly transformed) value, or the issues. */
export type StandardSchemaResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: readonly StandardSchemaIssue[] };

/**
 * A schema library's value as the Standard Schema interface (https://standardschema.dev) describes
 * it: zod 4 schemas are such values (as are valibot's and arktype's). kosong validates structured
 * output with `validate` (transforms apply: the result is the schema's output), and shows the model
 * the JSON Schema of its input: zod's own conversion for zod schemas, else the library's Standard
 * JSON Schema (`jsonSchema.input`), when it has one.
 */
export interface StandardSchema<Input = unknown, Output = Input> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => StandardSchemaResult<Output> | Promise<StandardSchemaResult<Output>>;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
    readonly jsonSchema?:
      | { readonly input: (options: { readonly target: 'draft-2020-12' | 'draft-07' }) => Record<string, unknown> }
      | undefined;
  };
}

/**
 * What a structured output is described with: a zod 4 schema (or another Standard Schema with a JSON
 * Schema), or a JSON Schema (draft 2020-12, validated with ajv).
 */
export type OutputSchema = StandardSchema | JsonSchema;

const OUTPUT_SPEC: unique symbol = Symbol.for('kosong.OutputSpec');

/** A schema with the name and description the model is shown (see {@link structuredOutput}). */
export interface OutputSpec<T = unknown> {
  readonly [OUTPUT_SPEC]: true;
  readonly schema: OutputSchema;
  /** The schema's name (`[A-Za-z0-9_-]`, at most 64 characters); default `output`. */
  readonly name: string | undefined;
  /** What the output is, for the model. */
  readonly description: string | undefined;
  /** Carries the output's type; never set. */
  readonly __output?: T;
}

/** What `output` options take: a schema, or a schema with a name and a description. */
export type OutputOption = OutputSchema | OutputSpec;

/** The type of the value a schema's output is, after validation (and transforms): `unknown` for a JSON Schema. */
export type InferOutput<S> = S extends OutputSpec<infer T>
  ? T
  : S extends { readonly '~standard': { readonly types?: { readonly output: infer O } | undefined } }
    ? unknown extends O
      ? unknown
      : O
    : unknown;

/**
 * A schema for structured output with the name and the description the model is shown (some APIs
 * send them: Chat Completions, Responses).
 *
 * @example
 * const weather = structuredOutput(z.object({ city: z.string(), celsius: z.number() }), { name: 'weather', description: 'The weather in a city.' });
 * const result = await step({ provider, systemPrompt, toolset, history, output: weather }); // result.output: { city: string; celsius: number } | undefined
 */
export function structuredOutput<S extends OutputSchema>(schema: S, options: { readonly name?: string; readonly description?: string } = {}): OutputSpec<InferOutput<S>> {
  return Object.freeze({ [OUTPUT_SPEC]: true as const, schema, name: options.name, description: options.description });
}

/** Whether `value` was made by {@link structuredOutput}. */
export function isOutputSpec(value: unknown): value is OutputSpec {
  return typeof value === 'object' && value !== null && (value as Partial<Record<typeof OUTPUT_SPEC, unknown>>)[OUTPUT_SPEC] === true;
}

/** Whether `value` is a Standard Schema (a zod 4 schema, say). */
export function isStandardSchema(value: unknown): value is StandardSchema {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return false;
  const standard = (value as { readonly '~standard'?: unknown })['~standard'];
  return typeof standard === 'object' && standard !== null && typeof (standard as { validate?: unknown }).validate === 'function';
}
