import type { StreamReply } from './gemini-server.js';

/** A part of a Gemini response, as the REST API sends it. */
export type WirePart = Readonly<Record<string, unknown>>;

/** Token counts of a `usageMetadata`, by their wire names. */
export interface WireUsage {
  readonly promptTokenCount?: number;
  readonly candidatesTokenCount?: number;
  readonly thoughtsTokenCount?: number;
  readonly cachedContentTokenCount?: number;
  readonly toolUsePromptTokenCount?: number;
  readonly totalTokenCount?: number;
}

/** A text part. */
export function wireText(text: string): WirePart {
  return { text };
}

/** A thought summary part (what `includeThoughts` streams). */
export function wireThought(text: string): WirePart {
  return { text, thought: true };
}

/** A function call part, with the API's call id and the thought signature when given. */
export function wireFunctionCall(name: string, args: Readonly<Record<string, unknown>>, options: { readonly id?: string; readonly thoughtSignature?: string } = {}): WirePart {
  const functionCall = options.id === undefined ? { name, args } : { id: options.id, name, args };
  return options.thoughtSignature === undefined ? { functionCall } : { functionCall, thoughtSignature: options.thoughtSignature };
}

/** Options of one {@link wireChunk}. */
export interface ChunkOptions {
  readonly parts?: readonly WirePart[];
  /** e.g. `STOP`, `MAX_TOKENS`, `SAFETY`. */
  readonly finishReason?: string;
  readonly usage?: WireUsage;
  readonly responseId?: string;
  readonly modelVersion?: string;
}

/**
 * One event of a streamed response (a `GenerateContentResponse`): one candidate with the parts, the
 * finish reason when given, and the usage (its total filled in).
 */
export function wireChunk(options: ChunkOptions = {}): object {
  const candidate: Record<string, unknown> = { content: { parts: options.parts ?? [], role: 'model' }, index: 0 };
  if (options.finishReason !== undefined) candidate['finishReason'] = options.finishReason;
  const chunk: Record<string, unknown> = { candidates: [candidate] };
  if (options.usage !== undefined) chunk['usageMetadata'] = withTotal(options.usage);
  chunk['modelVersion'] = options.modelVersion ?? 'gemini-test';
  chunk['responseId'] = options.responseId ?? 'resp-test';
  return chunk;
}

/** Gemini's JSON error body: `{ error: { code, message, status, details? } }`. */
export function errorBody(code: number, status: string, message: string, details?: readonly object[]): object {
  return { error: details === undefined ? { code, message, status } : { code, message, status, details } };
}

/** A stream reply of text deltas, the last event with finish reason `STOP` and the usage. */
export function textReply(texts: readonly string[], options: Omit<StreamReply, 'type' | 'events'> & { readonly responseId?: string; readonly usage?: WireUsage } = {}): StreamReply {
  const { responseId, usage = { promptTokenCount: 10, candidatesTokenCount: texts.length }, ...rest } = options;
  const ids = responseId === undefined ? {} : { responseId };
  return {
    type: 'stream',
    events: texts.map((text, index) =>
      wireChunk(index === texts.length - 1 ? { ...ids, parts: [wireText(text)], finishReason: 'STOP', usage } : { ...ids, parts: [wireText(text)] }),
    ),
    ...rest,
  };
}

function withTotal(usage: WireUsage): WireUsage {
  if (usage.totalTokenCount !== undefined) return usage;
  const total = (usage.promptTokenCount ?? 0) + (usage.candidatesTokenCount ?? 0) + (usage.thoughtsTokenCount ?? 0) + (usage.toolUsePromptTokenCount ?? 0);
  return { ...usage, totalTokenCount: total };
}
