import { ToolDefinitionError } from './errors.js';

/** Per-tool limits, also the toolset-wide defaults (see {@link SimpleToolsetOptions}). */
export interface ToolLimits {
  /** How long one call may run, in ms (from when it starts, not while it waits for a slot). `Infinity`: no limit. */
  readonly timeoutMs?: number;
  /** Cap on the characters (UTF-16 code units) of text output the model gets. `Infinity`: no cap. */
  readonly maxOutputChars?: number;
}

/**
 * Checks limits and returns only those that are set (so they can be spread under
 * `exactOptionalPropertyTypes`). `owner` names the tool (or toolset) in the error.
 *
 * @throws ToolDefinitionError for a timeout that is not a positive number, or a cap that is not a positive integer.
 */
export function checkLimits(owner: string, limits: ToolLimits): ToolLimits {
  const { timeoutMs, maxOutputChars } = limits;
  if (timeoutMs !== undefined && !(typeof timeoutMs === 'number' && timeoutMs > 0)) {
    throw new ToolDefinitionError(owner, `timeoutMs must be a positive number of milliseconds (or Infinity), got ${String(timeoutMs)}`);
  }
  if (
    maxOutputChars !== undefined &&
    !(typeof maxOutputChars === 'number' && maxOutputChars > 0 && (Number.isInteger(maxOutputChars) || maxOutputChars === Infinity))
  ) {
    throw new ToolDefinitionError(owner, `maxOutputChars must be a positive integer (or Infinity), got ${String(maxOutputChars)}`);
  }
  return {
    ...(timeoutMs !== undefined && { timeoutMs }),
    ...(maxOutputChars !== undefined && { maxOutputChars }),
  };
}

/**
 * Checks the model-facing fields every tool has.
 *
 * @throws ToolDefinitionError for an empty or non-string name, or a non-string description.
 */
export function checkNameAndDescription(name: unknown, description: unknown): asserts name is string {
  if (typeof name !== 'string' || name === '') {
    throw new ToolDefinitionError(String(name), 'the name must be a non-empty string');
  }
  if (typeof description !== 'string') {
    throw new ToolDefinitionError(name, 'the description must be a string');
  }
}
