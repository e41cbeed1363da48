/**
 * The AI SDK language models the bridge takes: any object of the `LanguageModelV2`, `V3` or `V4`
 * specification of `@ai-sdk/provider`, told apart by its `specificationVersion`. The public type is
 * structural, so that this package's types do not depend on one copy (or one major) of
 * `@ai-sdk/provider`: a model of any provider package, of any of the three specs, fits it. Inside,
 * the bridge reads each model with the spec's own types (see `specified-model.ts`).
 *
 * @module
 */
/** The specification versions the bridge speaks. */
export type SpecificationVersion = 'v2' | 'v3' | 'v4';

/**
 * An AI SDK language model (`LanguageModelV2`, `V3` or `V4` of `@ai-sdk/provider`), e.g.
 * `openai.chat('gpt-4.1')`, `anthropic('claude-sonnet-4-6')`, `mistral('mistral-large-latest')`.
 * Only `doStream` is called.
 */
export interface AiSdkLanguageModel {
  /** `v2`, `v3` or `v4`: which spec the model implements (`v1` models of the AI SDK 4 are not taken). */
  readonly specificationVersion: string;
  /** The provider's id, e.g. `openai.chat`. */
  readonly provider: string;
  /** The provider's id of the model, e.g. `gpt-4.1`. */
  readonly modelId: string;
  /** Streams one generation. Its options are those of the model's spec. */
  doStream(options: never): PromiseLike<{ readonly stream: ReadableStream<unknown> }>;
}
