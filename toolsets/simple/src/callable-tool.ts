import type { JsonValue, ReplayPolicy, Tool, ToolContext, ToolReturnValue } from '@kosong/core';
import type { SchemaIssue } from '@kosong/core/json-schema';

/**
 * What a tool's `execute` may return: a {@link ToolReturnValue} (build it with `toolOk` / `toolError`
 * from `@kosong/core`), or a string as shorthand for `toolOk({ output: string })`. Anything else
 * becomes an `Invalid return type: …` error result.
 */
export type ToolOutput = ToolReturnValue | string;

/**
 * A function deciding whether a call needs approval, from its arguments and context. (Declared as a
 * method's type, so a tool of specific arguments still is a `CallableTool` of unknown ones, as
 * `execute` allows.)
 */
export type ApprovalCheck<Args> = { check(args: Args, context: ToolContext): boolean | Promise<boolean> }['check'];

/** One reason why arguments are invalid: where (the path of the value inside the arguments) and what. */
export type ValidationIssue = SchemaIssue;

/** The outcome of checking a call's arguments: the value `execute` gets, or what is wrong with them. */
export type ArgumentCheck<Args> =
  | { readonly ok: true; readonly value: Args }
  | { readonly ok: false; readonly issues: readonly ValidationIssue[] };

/**
 * A tool a {@link SimpleToolset} can run: the model-facing definition ({@link Tool}) plus how to check
 * the arguments and what to do with them. Build one with {@link defineTool} (zod schema) or
 * {@link defineJsonSchemaTool} (JSON Schema, checked with ajv), or implement it yourself.
 *
 * @typeParam Args - what `validate` produces and `execute` receives.
 */
export interface CallableTool<Args = unknown> extends Tool {
  /**
   * How long one call may run, in ms, before its signal aborts and the model gets a timeout error
   * result. Overrides the toolset's default; `Infinity`: no limit.
   */
  readonly timeoutMs?: number;
  /** Cap on the characters of text output the model gets; overrides the toolset's default. */
  readonly maxOutputChars?: number;
  /**
   * The tool's replay policy: what may happen to an interrupted call of it (its start recorded, its
   * outcome not) when its step is done again; `'never'` when absent. See `ReplayPolicy` in
   * `@kosong/core`, and the `replay` option of {@link defineTool}.
   */
  readonly replay?: ReplayPolicy;
  /**
   * Whether a call must be approved before it runs: `true`, or a function of the arguments as
   * `validate` made them and the call's context (see `NeedsApproval`); absent or `false`: never.
   */
  readonly needsApproval?: boolean | ApprovalCheck<Args>;
  /**
   * Checks parsed JSON arguments (never `undefined`: absent arguments are `{}`). Must not throw for
   * bad input: report it as issues. May return a promise (e.g. for async refinements).
   */
  validate(args: JsonValue): ArgumentCheck<Args> | Promise<ArgumentCheck<Args>>;
  /**
   * Runs the tool. `context.signal` aborts when the step aborts or the call times out: honour it.
   * A throw (or a rejection) becomes an `Error running tool: …` error result.
   */
  execute(args: Args, context: ToolContext): ToolOutput | Promise<ToolOutput>;
}
