import type { ContentPart, JsonObject, JsonValue } from '../message/parts.js';

/** A short line for the user (not the model) about a tool call, e.g. "Read 12 lines". */
export interface BriefDisplayBlock {
  readonly type: 'brief';
  readonly text: string;
}

/** A display block of a kind this runtime does not know; kept, not interpreted. */
export interface UnknownDisplayBlock {
  readonly type: string;
  readonly data: JsonValue;
}

/** Something a UI can show about a tool call. */
export type DisplayBlock = BriefDisplayBlock | UnknownDisplayBlock;

/** What a tool returned. */
export interface ToolReturnValue {
  readonly isError: boolean;
  /** The output, for the model. */
  readonly output: string | readonly ContentPart[];
  /** An explanatory message, for the model. */
  readonly message: string;
  /** Blocks for the user or a UI. */
  readonly display: readonly DisplayBlock[];
  /** Anything else, for debugging and tests. */
  readonly extras?: JsonObject;
}

/** The result of one tool call: the return value, tagged with the id of the call. */
export interface ToolResult {
  readonly toolCallId: string;
  readonly returnValue: ToolReturnValue;
  /**
   * Set by the runtime, never by a toolset: the call needed approval and the decision was deferred,
   * so it did not run. `returnValue` then says so (an error result), but the call is not finished:
   * the agent loop stops the turn instead of giving this result to the model (see `Agent.resume`).
   */
  readonly deferred?: true;
}

/** Fields of a successful {@link ToolReturnValue}. */
export interface ToolOkInit {
  readonly output: string | ContentPart | readonly ContentPart[];
  readonly message?: string;
  /** One line for the user; becomes a {@link BriefDisplayBlock}. */
  readonly brief?: string;
  readonly extras?: JsonObject;
}

/** Fields of a failed {@link ToolReturnValue}. */
export interface ToolErrorInit {
  /** What went wrong, for the model. */
  readonly message: string;
  /** One line for the user; becomes a {@link BriefDisplayBlock}. */
  readonly brief: string;
  readonly output?: string | ContentPart | readonly ContentPart[];
  readonly extras?: JsonObject;
}

/** A successful return value. */
export function toolOk(init: ToolOkInit): ToolReturnValue {
  return returnValue(false, init.output, init.message ?? '', init.brief ?? '', init.extras);
}

/** A failed return value: the model is told what went wrong and may try again. */
export function toolError(init: ToolErrorInit): ToolReturnValue {
  return returnValue(true, init.output ?? '', init.message, init.brief, init.extras);
}

/** The text of the first brief display block, or `''`. */
export function briefOf(value: ToolReturnValue): string {
  for (const block of value.display) if (block.type === 'brief' && 'text' in block) return block.text;
  return '';
}

/** Whether a value has the shape of a {@link ToolResult} (used to reject what a toolset must not return). */
export function isToolResult(value: unknown): value is ToolResult {
  if (typeof value !== 'object' || value === null) return false;
  const { toolCallId, returnValue: ret } = value as Partial<ToolResult>;
  return typeof toolCallId === 'string' && isToolReturnValue(ret);
}

/** Whether a value has the shape of a {@link ToolReturnValue}. */
export function isToolReturnValue(value: unknown): value is ToolReturnValue {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Partial<ToolReturnValue>;
  return (
    typeof v.isError === 'boolean' &&
    (typeof v.output === 'string' || Array.isArray(v.output)) &&
    typeof v.message === 'string' &&
    Array.isArray(v.display)
  );
}

function returnValue(
  isError: boolean,
  output: string | ContentPart | readonly ContentPart[],
  message: string,
  brief: string,
  extras: JsonObject | undefined,
): ToolReturnValue {
  const value: ToolReturnValue = {
    isError,
    output: typeof output === 'string' || Array.isArray(output) ? (output as string | readonly ContentPart[]) : [output as ContentPart],
    message,
    display: brief ? [{ type: 'brief', text: brief }] : [],
  };
  return extras === undefined ? value : { ...value, extras };
}
