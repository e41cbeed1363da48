/**
 * JSON (de)serialisation of messages in the wire format of the Python kosong (`Message.model_dump`
 * with `exclude_none=True`, kosong spec §1.5), so JSONL histories are interchangeable with it:
 *
 * - snake_case keys (`image_url`, `tool_calls`, `tool_call_id`, ...), field order
 *   `role, name, content, tool_calls, tool_call_id, partial`;
 * - `content` is a plain string when it is exactly one text part, else a list of parts, each with its
 *   optional fields present as `null` (`"encrypted": null`, `"id": null`);
 * - reading accepts `content` as a string, `null` or a list of parts, and `null` for any optional field.
 *
 * Reading validates with zod, loaded when the first message is read (not when this module is): zod is
 * some 100 ES modules, and a process that never reads a message from JSON should not pay for them.
 *
 * @module
 */
import type * as zod from 'zod';
import type { z } from 'zod';
import { lazyZod } from '../lazy-zod.js';

import type { Message, Role } from './message.js';
import type { ContentPart, ContentPartType, JsonObject, JsonValue, MediaURL, ToolCall } from './parts.js';

/** One problem found by {@link messageFromJSON}. */
export interface MessageValidationIssue {
  /** Where the problem is, as a JSONPath-like string rooted at `$`, e.g. `$.content[2].type`. */
  readonly path: string;
  /** What is wrong there. */
  readonly message: string;
}

/**
 * Thrown when a value is not a valid message in the wire format ({@link messageFromJSON}), or when a
 * message holds a part that has no wire form ({@link messageToJSON}).
 */
export class MessageValidationError extends Error {
  override readonly name = 'MessageValidationError';
  /** The path of the first bad field, e.g. `$.content[2].type`; `$` is the value itself. */
  readonly path: string;
  /** Every problem found, in document order; never empty. */
  readonly issues: readonly MessageValidationIssue[];

  constructor(issues: readonly MessageValidationIssue[], options?: ErrorOptions) {
    const all = issues.length > 0 ? [...issues] : [{ path: '$', message: 'invalid message' }];
    const first = all[0]!;
    const more = all.length > 1 ? ` (and ${all.length - 1} more issue${all.length > 2 ? 's' : ''})` : '';
    super(`Invalid message at ${first.path}: ${first.message}${more}`, options);
    this.path = first.path;
    this.issues = Object.freeze(all.map((issue) => Object.freeze({ path: issue.path, message: issue.message })));
  }
}

// ---------------------------------------------------------------------------------------------------
// Serialisation

/**
 * Serialises a message to its wire form (spec §1.5), ready for `JSON.stringify`.
 * Message-level fields that are `undefined` are omitted; `extras` is deep-copied.
 *
 * @throws {MessageValidationError} if the content holds something that is not a content part.
 */
export function messageToJSON(message: Message): JsonObject {
  const out: Record<string, JsonValue> = { role: message.role };
  if (message.name !== undefined) out['name'] = message.name;
  out['content'] = contentToJSON(message.content);
  if (message.toolCalls !== undefined) out['tool_calls'] = message.toolCalls.map(toolCallToJSON);
  if (message.toolCallId !== undefined) out['tool_call_id'] = message.toolCallId;
  if (message.partial !== undefined) out['partial'] = message.partial;
  return out;
}

function contentToJSON(content: readonly ContentPart[]): JsonValue {
  const only = content.length === 1 ? content[0] : undefined;
  if (only !== undefined && only.type === 'text') return only.text;
  return content.map(partToJSON);
}

function partToJSON(part: ContentPart, index: number): JsonObject {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: part.text };
    case 'think':
      return { type: 'think', think: part.think, encrypted: part.encrypted ?? null };
    case 'image_url':
      return { type: 'image_url', image_url: mediaToJSON(part.imageUrl) };
    case 'audio_url':
      return { type: 'audio_url', audio_url: mediaToJSON(part.audioUrl) };
    case 'video_url':
      return { type: 'video_url', video_url: mediaToJSON(part.videoUrl) };
    default: {
      const type: unknown = (part as { readonly type?: unknown }).type;
      throw new MessageValidationError([
        { path: `$.content[${index}].type`, message: `${describeType(type)} is not a content part type` },
      ]);
    }
  }
}

function mediaToJSON(media: MediaURL): JsonObject {
  return { url: media.url, id: media.id ?? null };
}

function toolCallToJSON(call: ToolCall): JsonObject {
  const out: Record<string, JsonValue> = {
    type: 'function',
    id: call.id,
    function: { name: call.function.name, arguments: call.function.arguments },
  };
  if (call.extras !== undefined) out['extras'] = structuredClone(call.extras);
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Deserialisation

const ROLES = ['system', 'user', 'assistant', 'tool'] as const satisfies readonly Role[];
// Compile-time check that ROLES lists every Role.
const _allRoles: [Exclude<Role, (typeof ROLES)[number]>] extends [never] ? true : false = true;

const PART_TYPES = ['text', 'think', 'image_url', 'audio_url', 'video_url'] as const satisfies readonly ContentPartType[];
const _allPartTypes: [Exclude<ContentPartType, (typeof PART_TYPES)[number]>] extends [never] ? true : false = true;

/** A media reference as the reading schema outputs it. */
interface WireMedia {
  readonly url: string;
  readonly id?: string | null | undefined;
}

/** A content part as the reading schema outputs it (the compiler checks it against the schema's own output). */
type WirePart =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'think'; readonly think: string; readonly encrypted?: string | null | undefined }
  | { readonly type: 'image_url'; readonly image_url: WireMedia }
  | { readonly type: 'audio_url'; readonly audio_url: WireMedia }
  | { readonly type: 'video_url'; readonly video_url: WireMedia };

/** Builds the reading schema with `zod`. */
function buildMessageSchema(z: typeof zod.z) {
  const mediaSchema = z.object({ url: z.string(), id: z.string().nullish() });

  const wirePartSchema = z.discriminatedUnion(
    'type',
    [
      z.object({ type: z.literal('text'), text: z.string() }),
      z.object({ type: z.literal('think'), think: z.string(), encrypted: z.string().nullish() }),
      z.object({ type: z.literal('image_url'), image_url: mediaSchema }),
      z.object({ type: z.literal('audio_url'), audio_url: mediaSchema }),
      z.object({ type: z.literal('video_url'), video_url: mediaSchema }),
    ],
    {
      error: (issue) => {
        if (issue.code !== 'invalid_union') return undefined;
        const input: unknown = issue.input;
        const type = typeof input === 'object' && input !== null ? (input as { readonly type?: unknown }).type : undefined;
        const expected = PART_TYPES.map((t) => JSON.stringify(t)).join(', ');
        return type === undefined
          ? `missing content part type; expected one of ${expected}`
          : `unknown content part type ${describeType(type)}; expected one of ${expected}`;
      },
    },
  );

  const partSchema = wirePartSchema.transform(partFromWire);

  const toolCallSchema = z
    .object({
      // Python defaults a missing `type` to "function".
      type: z.literal('function').optional(),
      id: z.string(),
      // Required (nullable) in Python, but its `exclude_none` dumps drop a `None`; read a missing one as `null`.
      function: z.object({ name: z.string(), arguments: z.string().nullish() }),
      // Not z.record/z.json: they rebuild objects by assignment, which drops (or applies!) `__proto__` keys.
      extras: z
        .unknown()
        .superRefine((extras, ctx) => {
          if (extras === null || extras === undefined) return;
          const bad = typeof extras === 'object' && !Array.isArray(extras) ? nonJsonPath(extras) : [];
          if (bad) ctx.addIssue({ code: 'custom', path: bad, message: 'expected a JSON value (string, finite number, boolean, null, array or object)' });
        })
        .transform((extras) => (extras === null || extras === undefined ? extras : (structuredClone(extras) as Record<string, JsonValue>)))
        .optional(),
    })
    .transform(toolCallFromWire);

  const messageSchema = z
    .object({
      role: z.enum(ROLES),
      name: z.string().nullish(),
      content: z.preprocess(normaliseContent, z.array(partSchema)),
      tool_calls: z.array(toolCallSchema).nullish(),
      tool_call_id: z.string().nullish(),
      partial: z.boolean().nullish(),
    })
    .transform(messageFromWire);
  return messageSchema;
}

type MessageSchema = ReturnType<typeof buildMessageSchema>;

let messageSchema: MessageSchema | undefined;

/** The reading schema, built on first use (loading zod). */
function readingSchema(): MessageSchema {
  return (messageSchema ??= buildMessageSchema(lazyZod()));
}

/**
 * Reads a message from its wire form (spec §1.5), e.g. one parsed line of a Python kosong JSONL history.
 * `content` may be a string (one text part), `null` (no parts) or a list of parts; `null` optional
 * fields become absent; unknown keys are ignored (as pydantic does).
 *
 * @throws {MessageValidationError} naming the path of the first bad field.
 */
export function messageFromJSON(value: unknown): Message {
  const result = readingSchema().safeParse(value, { error: issueMessage });
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => ({ path: formatPath(issue.path), message: issue.message }));
  throw new MessageValidationError(issues, { cause: result.error });
}

function normaliseContent(value: unknown): unknown {
  if (value === null) return [];
  if (typeof value === 'string') return [{ type: 'text', text: value }];
  return value;
}

/** Parse-time error map: clearer messages for a missing value and for a non-JSON value in `extras`. */
function issueMessage(issue: z.core.$ZodRawIssue): string | undefined {
  if (issue.input === undefined && (issue.code === 'invalid_type' || issue.code === 'invalid_value')) {
    return 'required value is missing';
  }
  // The only plain union in the schema is `z.json()` (part dispatch has its own error map).
  if (issue.code === 'invalid_union') return 'expected a JSON value (string, finite number, boolean, null, array or object)';
  return undefined;
}

function partFromWire(part: WirePart): ContentPart {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: part.text };
    case 'think':
      return typeof part.encrypted === 'string'
        ? { type: 'think', think: part.think, encrypted: part.encrypted }
        : { type: 'think', think: part.think };
    case 'image_url':
      return { type: 'image_url', imageUrl: mediaFromWire(part.image_url) };
    case 'audio_url':
      return { type: 'audio_url', audioUrl: mediaFromWire(part.audio_url) };
    case 'video_url':
      return { type: 'video_url', videoUrl: mediaFromWire(part.video_url) };
  }
}

function mediaFromWire(media: WireMedia): MediaURL {
  return typeof media.id === 'string' ? { url: media.url, id: media.id } : { url: media.url };
}

function toolCallFromWire(call: {
  id: string;
  function: { name: string; arguments?: string | null | undefined };
  extras?: Record<string, JsonValue> | null | undefined;
}): ToolCall {
  const base: ToolCall = { type: 'function', id: call.id, function: { name: call.function.name, arguments: call.function.arguments ?? null } };
  return call.extras === null || call.extras === undefined ? base : { ...base, extras: call.extras };
}

function messageFromWire(wire: {
  role: Role;
  name?: string | null | undefined;
  content: ContentPart[];
  tool_calls?: ToolCall[] | null | undefined;
  tool_call_id?: string | null | undefined;
  partial?: boolean | null | undefined;
}): Message {
  const message: { -readonly [K in keyof Message]: Message[K] } = { role: wire.role, content: wire.content };
  if (wire.tool_calls !== null && wire.tool_calls !== undefined) message.toolCalls = wire.tool_calls;
  if (wire.tool_call_id !== null && wire.tool_call_id !== undefined) message.toolCallId = wire.tool_call_id;
  if (wire.name !== null && wire.name !== undefined) message.name = wire.name;
  if (wire.partial !== null && wire.partial !== undefined) message.partial = wire.partial;
  return message;
}

// ---------------------------------------------------------------------------------------------------
// Helpers

/**
 * The path to the first value inside `value` that is not JSON (`[]`: the value itself), or
 * `undefined` when it is all JSON. Own `__proto__` keys are plain data here.
 */
function nonJsonPath(value: unknown): (string | number)[] | undefined {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return undefined;
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : [];
  if (typeof value !== 'object') return [];
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const bad = nonJsonPath(value[i]);
      if (bad) return [i, ...bad];
    }
    return undefined;
  }
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return [];
  for (const [key, inner] of Object.entries(value)) {
    const bad = nonJsonPath(inner);
    if (bad) return [key, ...bad];
  }
  return undefined;
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

function formatPath(path: readonly PropertyKey[]): string {
  let out = '$';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else if (typeof key === 'string') out += IDENTIFIER.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
    else out += `[${String(key)}]`;
  }
  return out;
}

function describeType(type: unknown): string {
  if (typeof type === 'string') return JSON.stringify(type);
  if (type === null) return 'null';
  if (Array.isArray(type)) return 'an array';
  return typeof type === 'object' ? 'an object' : `a ${typeof type}`;
}
