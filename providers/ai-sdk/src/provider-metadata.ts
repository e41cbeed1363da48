/**
 * Where an AI SDK model's provider metadata travels in kosong messages, so that what the model
 * needs back on the next step (Anthropic's thinking signature or redacted thinking, OpenAI's
 * encrypted reasoning and item ids, Gemini's thought signatures) survives the round trip, JSON
 * persistence included: the AI SDK hands a part's `providerMetadata` back as the prompt part's
 * `providerOptions`, and so does the bridge.
 *
 * - a reasoning block's metadata: the `encrypted` field of the think part that closes the block,
 *   {@link REASONING_METADATA_PREFIX} + the JSON of the metadata;
 * - a tool call's metadata: the call's `extras` under {@link TOOL_CALL_METADATA_KEY}.
 *
 * @module
 */
import type { JsonObject, JsonValue, ThinkPart } from '@kosong/core';

/** Provider metadata as the AI SDK gives it: per provider, an object of JSON values. */
export type ProviderMetadata = Readonly<Record<string, JsonObject>>;

/** Provider options as the AI SDK takes them: per provider (`openai`, `anthropic`, …), an object of JSON values. */
export type ProviderOptions = Readonly<Record<string, JsonObject>>;

/**
 * What starts the `encrypted` field of a think part that holds AI SDK provider metadata. Its `:`
 * never occurs in a signature of the native providers (base64), so the two are not mistaken for
 * each other: a think part signed by another kosong provider goes to an AI SDK model as text only.
 */
export const REASONING_METADATA_PREFIX = 'ai-sdk:';

/** The `extras` key of a tool call that holds the AI SDK provider metadata of the call. */
export const TOOL_CALL_METADATA_KEY = 'ai_sdk_provider_metadata';

/** The `encrypted` text of a think part that carries `metadata`. */
export function encodeReasoningMetadata(metadata: ProviderMetadata): string {
  return REASONING_METADATA_PREFIX + JSON.stringify(metadata);
}

/** The provider metadata a think part carries (see {@link encodeReasoningMetadata}); `undefined` for any other. */
export function reasoningMetadata(part: ThinkPart): ProviderMetadata | undefined {
  const encrypted = part.encrypted;
  if (encrypted === undefined || !encrypted.startsWith(REASONING_METADATA_PREFIX)) return undefined;
  return metadataOf(parseJson(encrypted.slice(REASONING_METADATA_PREFIX.length)));
}

/** The provider metadata in a tool call's `extras`; `undefined` when there is none. */
export function toolCallMetadata(extras: JsonObject | undefined): ProviderMetadata | undefined {
  return extras === undefined ? undefined : metadataOf(extras[TOOL_CALL_METADATA_KEY]);
}

/** The `extras` of a tool call whose part carried `metadata`; `undefined` for none. */
export function toolCallExtras(metadata: ProviderMetadata | undefined): JsonObject | undefined {
  return metadata === undefined ? undefined : { [TOOL_CALL_METADATA_KEY]: metadata as JsonValue };
}

/**
 * The metadata of a part merged over what was gathered so far, per provider (a later key wins):
 * how the metadata of a block's start, deltas and end add up. `undefined` while there is none.
 */
export function mergeMetadata(gathered: ProviderMetadata | undefined, next: unknown): ProviderMetadata | undefined {
  const metadata = metadataOf(next);
  if (metadata === undefined) return gathered;
  if (gathered === undefined) return metadata;
  const merged: Record<string, JsonObject> = { ...gathered };
  for (const [provider, values] of Object.entries(metadata)) merged[provider] = { ...merged[provider], ...values };
  return merged;
}

/** `value` as provider metadata: an object of objects, with no undefined values (dropped); `undefined` when empty or malformed. */
function metadataOf(value: unknown): ProviderMetadata | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  let found: Record<string, JsonObject> | undefined;
  for (const [provider, values] of Object.entries(value)) {
    if (typeof values !== 'object' || values === null || Array.isArray(values)) continue;
    const clean = Object.fromEntries(Object.entries(values).filter(([, item]) => item !== undefined)) as JsonObject;
    (found ??= {})[provider] = clean;
  }
  return found;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
