/**
 * Settings of the AI SDK spec's call options that kosong has no neutral generation option for.
 *
 * @module
 */

/** Call options of the AI SDK spec that have no neutral kosong option: passed as they are. */
export interface SpecSettings {
  /** Sample only from the K most likely tokens. */
  readonly topK?: number | undefined;
  /** Presence penalty (the range is the provider's). */
  readonly presencePenalty?: number | undefined;
  /** Frequency penalty (the range is the provider's). */
  readonly frequencyPenalty?: number | undefined;
}
