/**
 * Structured output as a provider sees it: the JSON Schema the model's text must match, which each
 * provider maps to its API's native feature (Chat Completions `response_format`, Responses
 * `text.format`, Anthropic `output_config.format`, Gemini `responseJsonSchema`), or refuses with an
 * {@link UnsupportedOutputError}.
 *
 * @module
 */

import { errorMarker, hasErrorMarker, markError } from '../error-marker.js';
import type { JsonSchema } from '../tooling/tool.js';
import { ChatProviderError } from './errors.js';

const UNSUPPORTED_OUTPUT_ERROR = errorMarker('UnsupportedOutputError');

/** The default {@link OutputFormat.name}. */
export const DEFAULT_OUTPUT_NAME = 'output';

/**
 * The structured output a request asks for: the model answers with one JSON text (and no other
 * text) that matches `schema`. Built by the runtime from the caller's zod schema or JSON Schema.
 */
export interface OutputFormat {
  readonly type: 'json_schema';
  /** A name for the schema, as some APIs want one (`[A-Za-z0-9_-]`, 1 to 64 characters). */
  readonly name: string;
  /** What the output is, for the model (APIs that take one). */
  readonly description: string | undefined;
  /**
   * The JSON Schema (draft 2020-12) of the JSON text. Its root is always an object schema (the
   * runtime wraps any other root in `{"value": …}`), local `$ref`s are inlined except recursive ones,
   * and it has no `$schema`. Frozen; a provider that must change it (strict mode) changes a copy.
   */
  readonly schema: JsonSchema;
}

/**
 * A provider cannot honour the structured output asked for: its API has no such feature, or not for
 * this schema. Raised when the provider is called, before any request; not retryable.
 */
export class UnsupportedOutputError extends ChatProviderError {
  /** The provider's name. */
  readonly provider: string;
  /** Why. */
  readonly reason: string;

  constructor(provider: string, reason: string, options?: ErrorOptions) {
    super(`Provider "${provider}" cannot produce this structured output: ${reason}`, options);
    this.provider = provider;
    this.reason = reason;
    markError(this, UNSUPPORTED_OUTPUT_ERROR);
  }

  /** Whether `error` is an {@link UnsupportedOutputError}. */
  static override isInstance(error: unknown): error is UnsupportedOutputError {
    return hasErrorMarker(error, UNSUPPORTED_OUTPUT_ERROR);
  }
}
