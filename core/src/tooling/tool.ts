/** A JSON Schema (draft 2020-12) describing a tool's arguments. */
export type JsonSchema = { readonly [keyword: string]: unknown };

/** What the model is told about a tool. */
export interface Tool {
  /** The name the model calls the tool by. */
  readonly name: string;
  /** What the tool does, for the model. */
  readonly description: string;
  /** The tool's arguments, as a JSON Schema. */
  readonly parameters: JsonSchema;
}
