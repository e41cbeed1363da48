/**
 * Errors of structured output. Each carries a static `isInstance(e)` that works across duplicated
 * copies of this package.
 *
 * @module
 */

import { errorMarker, hasErrorMarker, markError } from '../error-marker.js';
import type { Message } from '../message/message.js';
import type { FinishReason } from '../provider/chat-provider.js';
import type { TokenUsage } from '../provider/token-usage.js';
import { formatIssues, type SchemaIssue } from '../schema/schema-issues.js';

const STRUCTURED_OUTPUT_ERROR = errorMarker('StructuredOutputError');
const INVALID_OUTPUT_SCHEMA_ERROR = errorMarker('InvalidOutputSchemaError');

/** How many characters of the model's text an error message quotes. */
const QUOTED_CHARACTERS = 200;

/**
 * Why the model's output is not what was asked for:
 * - `empty`: it answered with no text;
 * - `truncated`: it was cut off (finish reason `length` or `content_filter`) before its JSON was complete;
 * - `not_json`: its text is not JSON;
 * - `invalid`: the JSON does not match the schema (`issues` say where and why).
 */
export type StructuredOutputFailure = 'empty' | 'truncated' | 'not_json' | 'invalid';

/** What a {@link StructuredOutputError} is made of. */
export interface StructuredOutputErrorDetails {
  readonly failure: StructuredOutputFailure;
  /** The model's text, whole, as it came. */
  readonly text: string;
  /** The schema's issues (`invalid`), or one issue saying what is wrong with the text. */
  readonly issues: readonly SchemaIssue[];
  /** The model's message (to show it its mistake, as the agent loop's retry does). */
  readonly response: Message;
  readonly finishReason: FinishReason | undefined;
  /** What the failed generation cost. */
  readonly usage: TokenUsage | undefined;
  /** The JSON or schema library's error, when one was thrown. */
  readonly cause?: unknown;
}

/**
 * The model's output does not match the structured output asked for. Carries its raw text and the
 * issues. Not retryable as such (the same request may well fail the same way): the agent loop can
 * be told to show the model its mistake once (`retryInvalidOutput`).
 */
export class StructuredOutputError extends Error {
  readonly failure: StructuredOutputFailure;
  readonly text: string;
  readonly issues: readonly SchemaIssue[];
  readonly response: Message;
  readonly finishReason: FinishReason | undefined;
  readonly usage: TokenUsage | undefined;

  constructor(details: StructuredOutputErrorDetails) {
    super(describe(details), details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'StructuredOutputError';
    this.failure = details.failure;
    this.text = details.text;
    this.issues = Object.freeze(details.issues.slice());
    this.response = details.response;
    this.finishReason = details.finishReason;
    this.usage = details.usage;
    markError(this, STRUCTURED_OUTPUT_ERROR);
  }

  /** Whether `error` is a {@link StructuredOutputError}. */
  static isInstance(error: unknown): error is StructuredOutputError {
    return hasErrorMarker(error, STRUCTURED_OUTPUT_ERROR);
  }
}

/**
 * A structured output schema cannot be used: a zod schema with no JSON Schema equivalent
 * (`z.date()`, `z.bigint()`, …), a JSON Schema that is not valid draft 2020-12, a value that is no
 * schema at all, or a bad name. Raised at call time, before any request.
 */
export class InvalidOutputSchemaError extends Error {
  constructor(reason: string, options?: ErrorOptions) {
    super(`Invalid structured output schema: ${reason}`, options);
    this.name = 'InvalidOutputSchemaError';
    markError(this, INVALID_OUTPUT_SCHEMA_ERROR);
  }

  /** Whether `error` is an {@link InvalidOutputSchemaError}. */
  static isInstance(error: unknown): error is InvalidOutputSchemaError {
    return hasErrorMarker(error, INVALID_OUTPUT_SCHEMA_ERROR);
  }
}

function describe(details: StructuredOutputErrorDetails): string {
  const { failure, text, finishReason } = details;
  switch (failure) {
    case 'empty':
      return 'The model answered with no text where structured output (JSON) was asked for.';
    case 'truncated':
      return `The model's output was cut off (finish reason "${finishReason ?? 'unknown'}") before its JSON was complete (${text.length} characters: ${quote(text)}).`;
    case 'not_json':
      return `The model's output is not JSON (${text.length} characters: ${quote(text)}): ${details.issues[0]?.message ?? 'it does not parse'}.`;
    default:
      return `The model's output does not match the schema:\n${formatIssues(details.issues, 'it does not match the schema')}`;
  }
}

/** The head of a text for an error message: never more than {@link QUOTED_CHARACTERS} characters of it. */
function quote(text: string): string {
  return text.length <= QUOTED_CHARACTERS ? JSON.stringify(text) : `${JSON.stringify(text.slice(0, QUOTED_CHARACTERS))}…`;
}
