/**
 * Errors thrown to the developer (never to the model: the model gets error results). Each names the
 * tool at fault and has a static `isInstance(e)` that works across duplicated package copies, where
 * `instanceof` fails.
 *
 * @module
 */

import { errorMarker, hasErrorMarker as marked, markError as mark } from '@kosong/core/toolset-kit';

const TOOL_DEFINITION_ERROR = errorMarker('ToolDefinitionError');
const TOOL_NAME_CONFLICT_ERROR = errorMarker('ToolNameConflictError');
const UNKNOWN_TOOL_ERROR = errorMarker('UnknownToolError');

/**
 * A tool could not be defined: its name, schema or options are invalid, or it has an option the
 * builder does not know. Thrown by `defineTool` and friends; a `TypeError`.
 */
export class ToolDefinitionError extends TypeError {
  constructor(
    /** The name of the tool at fault (as given, possibly not a valid name). */
    readonly tool: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(`Tool \`${tool}\`: ${message}`, options);
    this.name = 'ToolDefinitionError';
    mark(this, TOOL_DEFINITION_ERROR);
  }

  /** Whether `error` is a {@link ToolDefinitionError}. */
  static isInstance(error: unknown): error is ToolDefinitionError {
    return marked(error, TOOL_DEFINITION_ERROR);
  }
}

/** Two tools have the same name where one name must mean one tool (a toolset, or toolsets combined). */
export class ToolNameConflictError extends Error {
  constructor(
    /** The name both tools have. */
    readonly tool: string,
    /** Where each of the two tools comes from. */
    readonly sources: readonly [string, string],
  ) {
    super(`Tool \`${tool}\` is provided by both ${sources[0]} and ${sources[1]}`);
    this.name = 'ToolNameConflictError';
    mark(this, TOOL_NAME_CONFLICT_ERROR);
  }

  /** Whether `error` is a {@link ToolNameConflictError}. */
  static isInstance(error: unknown): error is ToolNameConflictError {
    return marked(error, TOOL_NAME_CONFLICT_ERROR);
  }
}

/** A tool was asked for by name (e.g. to remove it) and the toolset has no tool of that name. */
export class UnknownToolError extends Error {
  constructor(
    /** The name asked for. */
    readonly tool: string,
    /** The names the toolset has. */
    readonly available: readonly string[],
  ) {
    const known = available.length > 0 ? `tools: ${available.map((name) => `\`${name}\``).join(', ')}` : 'the toolset is empty';
    super(`Tool \`${tool}\` not found in the toolset (${known})`);
    this.name = 'UnknownToolError';
    mark(this, UNKNOWN_TOOL_ERROR);
  }

  /** Whether `error` is an {@link UnknownToolError}. */
  static isInstance(error: unknown): error is UnknownToolError {
    return marked(error, UNKNOWN_TOOL_ERROR);
  }
}
