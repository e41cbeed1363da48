/**
 * The wire form of a {@link PendingStep}: one JSON object, kept as one line of a JSONL history (or
 * one Redis value), in the style of the Python kosong format (snake_case keys, the message in its
 * wire form). It carries `"role": "_pending_step"` and a `token_count`, so that readers that know
 * nothing of it (the Python kosong, older versions of this library) take it for a token-count
 * record and skip it: they load the history as it was before the step, whole steps only.
 *
 * @module
 */
import type * as Zod from 'zod';
import { lazyZod } from '../lazy-zod.js';
import { messageFromJSON, messageToJSON } from '../message/json.js';
import type { ContentPart, JsonObject, JsonValue } from '../message/parts.js';
import type { FinishReason } from '../provider/chat-provider.js';
import type { TokenUsage } from '../provider/token-usage.js';
import type { DisplayBlock, ToolResult, ToolReturnValue } from '../tooling/tool-result.js';
import type { PendingStep } from './pending-step.js';

/** The `role` of a pending-step record. */
export const PENDING_STEP_ROLE = '_pending_step';

/** The `role` of the record that completes a pending step (the step's messages follow it in the same append). */
export const STEP_RESUMED_ROLE = '_step_resumed';

const FINISH_REASONS = ['stop', 'tool_calls', 'length', 'content_filter', 'other'] as const satisfies readonly FinishReason[];
const _allFinishReasons: [Exclude<FinishReason, (typeof FINISH_REASONS)[number]>] extends [never] ? true : false = true;

/** Builds the reading schema of a record with `zod` (loaded when the first record is read). */
function buildRecordSchema(z: typeof Zod.z) {
  const count = z.number().int().nonnegative();
  const usageSchema = z.object({ input_other: count, output: count, input_cache_read: count, input_cache_creation: count });
  /** A JSON object as parsed (kept as it is: rebuilding it would drop or apply `__proto__` keys). */
  const jsonObject = z.custom<JsonObject>((value) => typeof value === 'object' && value !== null && !Array.isArray(value), 'expected an object');
  const displaySchema = z.array(z.custom<DisplayBlock>((value) => typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string', 'expected a display block'));
  const resultSchema = z.object({
    tool_call_id: z.string(),
    return_value: z.object({
      is_error: z.boolean(),
      output: z.union([z.string(), z.array(z.unknown())]),
      message: z.string(),
      display: displaySchema,
      extras: jsonObject.optional(),
    }),
  });
  const recordSchema = z.object({
    role: z.literal(PENDING_STEP_ROLE),
    token_count: count,
    step_id: z.string().min(1),
    step: z.number().int().positive(),
    message: z.unknown(),
    results: z.array(resultSchema.nullable()),
    usage: usageSchema.nullable(),
    turn_usage: usageSchema,
    message_id: z.string().nullable(),
    finish_reason: z.enum(FINISH_REASONS).nullable(),
    deferred_at: z.number().finite(),
    expires_at: z.number().finite().nullable(),
    // The call ledger's identity of the step (absent in records of older versions: no ledger then).
    step_key: z.string().min(1).optional(),
    turn_id: z.string().min(1).optional(),
    turn_steps_before: count.optional(),
  });
  return { recordSchema, resultSchema };
}

type Schemas = ReturnType<typeof buildRecordSchema>;
type WireRecord = Zod.output<Schemas['recordSchema']>;
type WireResult = NonNullable<WireRecord['results'][number]>;
type WireUsage = WireRecord['turn_usage'];

let schemas: Schemas | undefined;

/** The wire form of a pending step, with the history's token count (for readers that know only that). */
export function pendingStepToJSON(pending: PendingStep, tokenCount: number): JsonObject {
  return {
    role: PENDING_STEP_ROLE,
    token_count: tokenCount,
    step_id: pending.stepId,
    step: pending.step,
    message: messageToJSON(pending.message),
    results: pending.results.map((result) => (result === undefined ? null : resultToJSON(result))),
    usage: pending.usage === undefined ? null : usageToJSON(pending.usage),
    turn_usage: usageToJSON(pending.turnUsage),
    message_id: pending.messageId ?? null,
    finish_reason: pending.finishReason ?? null,
    deferred_at: pending.deferredAt,
    expires_at: pending.expiresAt ?? null,
    ...(pending.key === undefined ? {} : { step_key: pending.key }),
    ...(pending.turn === undefined ? {} : { turn_id: pending.turn.id, turn_steps_before: pending.turn.stepsBefore }),
  };
}

/**
 * Reads a pending step from its wire form, checking all of it: the message, each result, that the
 * results are aligned with the message's tool calls and that at least one call waits.
 *
 * @throws Error naming the first problem.
 */
export function pendingStepFromJSON(value: unknown): PendingStep {
  const parsed = (schemas ??= buildRecordSchema(lazyZod())).recordSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`invalid pending step at $.${issue.path.join('.')}: ${issue.message}`, { cause: parsed.error });
  }
  const wire = parsed.data;
  let message;
  try {
    message = messageFromJSON(wire.message);
  } catch (error) {
    throw new Error(`invalid pending step message: ${(error as Error).message}`, { cause: error });
  }
  const calls = message.toolCalls ?? [];
  if (message.role !== 'assistant') throw new Error('invalid pending step: its message is not an assistant message');
  if (wire.results.length !== calls.length) throw new Error(`invalid pending step: ${wire.results.length} results for ${calls.length} tool calls`);
  if (!wire.results.includes(null)) throw new Error('invalid pending step: no call waits for approval');
  const results = wire.results.map((result, index) => {
    if (result === null) return undefined;
    if (result.tool_call_id !== calls[index]!.id) throw new Error(`invalid pending step: result ${index} is for call "${result.tool_call_id}", not "${calls[index]!.id}"`);
    return resultFromJSON(result, index);
  });
  return {
    stepId: wire.step_id,
    step: wire.step,
    message,
    results,
    usage: wire.usage === null ? undefined : usageFromJSON(wire.usage),
    turnUsage: usageFromJSON(wire.turn_usage),
    messageId: wire.message_id ?? undefined,
    finishReason: wire.finish_reason ?? undefined,
    deferredAt: wire.deferred_at,
    expiresAt: wire.expires_at ?? undefined,
    ...(wire.step_key === undefined ? {} : { key: wire.step_key }),
    ...(wire.turn_id === undefined ? {} : { turn: { id: wire.turn_id, stepsBefore: wire.turn_steps_before ?? 0 } }),
  };
}

/** The wire form of a tool result (as a pending step and the call ledger keep it). */
export function toolResultToJSON(result: ToolResult): JsonObject {
  return resultToJSON(result);
}

/** Reads a tool result from its wire form, checking all of it. @throws Error naming the first problem. */
export function toolResultFromJSON(value: unknown): ToolResult {
  const parsed = (schemas ??= buildRecordSchema(lazyZod())).resultSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`invalid tool result at $.${issue.path.join('.')}: ${issue.message}`, { cause: parsed.error });
  }
  return resultFromJSON(parsed.data, 0);
}

/** The record that completes the pending step `stepId` (its messages follow in the same append). */
export function stepResumedToJSON(stepId: string, tokenCount: number): JsonObject {
  return { role: STEP_RESUMED_ROLE, token_count: tokenCount, step_id: stepId };
}

/** The step id of a {@link stepResumedToJSON} record. @throws Error if it has none. */
export function stepResumedFromJSON(value: unknown): string {
  const { step_id: stepId, token_count: tokenCount } = value as { step_id?: unknown; token_count?: unknown };
  if (typeof stepId !== 'string' || stepId === '') throw new Error('invalid step-resumed record: no step_id');
  if (typeof tokenCount !== 'number') throw new Error('invalid step-resumed record: token_count is not a number');
  return stepId;
}

function resultToJSON(result: ToolResult): JsonObject {
  const { isError, output, message, display, extras } = result.returnValue;
  const returnValue: Record<string, JsonValue> = {
    is_error: isError,
    output: typeof output === 'string' ? output : partsToJSON(output),
    message,
    display: display as unknown as JsonValue,
  };
  if (extras !== undefined) returnValue['extras'] = extras;
  return { tool_call_id: result.toolCallId, return_value: returnValue };
}

function resultFromJSON(wire: WireResult, index: number): ToolResult {
  const { is_error, output, message, display, extras } = wire.return_value;
  let parts: string | readonly ContentPart[];
  try {
    parts = typeof output === 'string' ? output : messageFromJSON({ role: 'tool', content: output }).content;
  } catch (error) {
    throw new Error(`invalid pending step: the output of result ${index} is not content parts (${(error as Error).message})`, { cause: error });
  }
  const returnValue: ToolReturnValue = { isError: is_error, output: parts, message, display };
  return { toolCallId: wire.tool_call_id, returnValue: extras === undefined ? returnValue : { ...returnValue, extras } };
}

/** Content parts in their wire form, always as a list (a message's content of one text part would be a string). */
function partsToJSON(parts: readonly ContentPart[]): JsonValue {
  const content = messageToJSON({ role: 'tool', content: parts })['content']!;
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content;
}

function usageToJSON(usage: TokenUsage): JsonObject {
  return { input_other: usage.inputOther, output: usage.output, input_cache_read: usage.inputCacheRead, input_cache_creation: usage.inputCacheCreation };
}

function usageFromJSON(wire: WireUsage): TokenUsage {
  return { inputOther: wire.input_other, output: wire.output, inputCacheRead: wire.input_cache_read, inputCacheCreation: wire.input_cache_creation };
}
