/**
 * The echo DSL (kosong spec §8.2): a script of `kind: payload` lines describing one streamed model
 * response. See the package README for the full reference.
 *
 * @module
 */
import {
  APIConnectionError,
  APIStatusError,
  APITimeoutError,
  audioURLPart,
  imageURLPart,
  textPart,
  thinkPart,
  tokenUsage,
  toolCall,
  toolCallPart,
  videoURLPart,
  type ChatProviderError,
  type FinishReason,
  type JsonObject,
  type StreamedMessagePart,
  type TokenUsage,
  type ToolCall,
  type ToolCallPart,
} from '@kosong/core';

import { field, isMapping, parseMapping, parseValue, stripQuotes, truthy, type DslMapping } from './dsl-values.js';
import { EchoScriptError, type ScriptLine } from './echo-script-error.js';
import { pythonRepr, pythonStringRepr, pythonTypeName } from './python-repr.js';

/** What an echo script describes: the parts to stream, and the message id, usage and finish reason. */
export interface EchoScript {
  /** The parts to stream, in order. */
  readonly parts: readonly StreamedMessagePart[];
  /** From `id:` (the last one wins). */
  readonly id: string | undefined;
  /** From `usage:` (the last one wins). */
  readonly usage: TokenUsage | undefined;
  /** From `finish:` (the last one wins); an extension of the original DSL. */
  readonly finishReason: FinishReason | undefined;
}

/** Line breaks as Python's `str.splitlines()` knows them. */
// eslint-disable-next-line no-control-regex -- these control characters are line breaks to Python
export const LINE_BREAK = /\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/;

const FINISH_REASONS: ReadonlySet<string> = new Set<FinishReason>(['stop', 'tool_calls', 'length', 'content_filter', 'other']);

const USAGE_FIELDS = [
  ['input_other', 'inputOther'],
  ['output', 'output'],
  ['input_cache_read', 'inputCacheRead'],
  ['input_cache_creation', 'inputCacheCreation'],
] as const;

/** Options of {@link parseEchoScript}. */
export interface ParseEchoScriptOptions {
  /**
   * The number of the script's first line, when the script is a part of a larger one (a step of a
   * multi-step script, see `splitEchoSteps`): errors then name lines as the author sees them.
   * Default 1.
   */
  readonly firstLine?: number;
}

/**
 * Parses an echo script (one response), line by line. Blank lines, `#` comments, markdown fences (```` ``` ````)
 * and lines that are just `echo` are skipped; every other line is `kind: payload`, split at the
 * first colon, the kind case-insensitive, exactly one space after the colon removed.
 *
 * An `error:` line throws the error it describes at once (`error: 429`, `error: 500 boom` →
 * `APIStatusError`; `error: connection reset` → `APIConnectionError`; `error: timeout slow` →
 * `APITimeoutError`): lines before it are parsed first (their errors win), lines after it never are.
 *
 * @example
 * parseEchoScript('id: echo-1\ntext: Hello\ntool_call: {"id": "c1", "name": "ls", "arguments": "{}"}')
 * @throws {@link EchoScriptError} (a {@link ChatProviderError}) naming the line of a malformed directive.
 */
export function parseEchoScript(script: string, options: ParseEchoScriptOptions = {}): EchoScript {
  const firstLine = options.firstLine ?? 1;
  const parts: StreamedMessagePart[] = [];
  let id: string | undefined;
  let usage: TokenUsage | undefined;
  let finishReason: FinishReason | undefined;

  const lines = script.split(LINE_BREAK);
  for (let index = 0; index < lines.length; index++) {
    const line: ScriptLine = { number: index + firstLine, raw: lines[index]! };
    const text = line.raw.trim();
    if (text === '' || text.startsWith('#') || text.startsWith('```') || text.toLowerCase() === 'echo') continue;

    const colon = text.indexOf(':');
    if (colon < 0 && text === '---') {
      throw EchoScriptError.withText(line, `A '---' step separator at line ${line.number}: a script of several steps is played one step at a time (splitEchoSteps)`);
    }
    if (colon < 0) throw EchoScriptError.withText(line, `Invalid echo DSL at line ${line.number}: ${pythonStringRepr(line.raw)}`);
    const kind = text.slice(0, colon).trim().toLowerCase();
    let payload = text.slice(colon + 1);
    if (payload.startsWith(' ')) payload = payload.slice(1);

    switch (kind) {
      case 'error':
        throw simulatedError(payload.trim(), line);
      case 'id':
        id = stripQuotes(payload.trim());
        break;
      case 'usage':
        usage = parseUsage(payload, line);
        break;
      case 'finish':
        finishReason = parseFinishReason(payload, line);
        break;
      default:
        parts.push(parsePart(kind, payload, line));
    }
  }
  return { parts, id, usage, finishReason };
}

function parsePart(kind: string, payload: string, line: ScriptLine): StreamedMessagePart {
  switch (kind) {
    case 'text':
      return textPart(stripQuotes(payload));
    case 'think':
      return thinkPart(stripQuotes(payload));
    case 'image_url': {
      const { url, id } = parseUrlPayload(payload, kind, line);
      return imageURLPart(url, id);
    }
    case 'audio_url': {
      const { url, id } = parseUrlPayload(payload, kind, line);
      return audioURLPart(url, id);
    }
    case 'video_url': {
      const { url, id } = parseUrlPayload(payload, kind, line);
      return videoURLPart(url, id);
    }
    case 'tool_call':
      return parseToolCall(payload, line);
    case 'tool_call_part':
      return parseToolCallPart(payload);
    default:
      throw EchoScriptError.withText(line, `Unknown echo DSL kind '${kind}' at line ${line.number}: ${pythonStringRepr(line.raw)}`);
  }
}

function parseUsage(payload: string, line: ScriptLine): TokenUsage {
  const mapping = parseMapping(payload, 'usage', line);
  const counts: { -readonly [K in keyof TokenUsage]?: number } = {};
  for (const [key, property] of USAGE_FIELDS) {
    const value = Object.hasOwn(mapping, key) ? mapping[key] : 0;
    const count = toInteger(value);
    if (count === undefined) throw EchoScriptError.at(line, `Usage field '${key}' must be an integer, got ${pythonRepr(value)}`);
    counts[property] = count;
  }
  return tokenUsage(counts);
}

/** An integer, or an integer written as a string (as Python's `int()` takes it); anything else is `undefined`. */
function toInteger(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? value : undefined;
  if (typeof value === 'string' && /^\s*[+-]?\d+\s*$/.test(value)) {
    const parsed = Number(value);
    return Number.isSafeInteger(parsed) ? parsed : undefined;
  }
  return undefined;
}

function parseFinishReason(payload: string, line: ScriptLine): FinishReason {
  const value = stripQuotes(payload.trim()).toLowerCase();
  if (!FINISH_REASONS.has(value)) {
    throw EchoScriptError.at(
      line,
      `Invalid finish reason ${pythonStringRepr(value)}: expected stop, tool_calls, length, content_filter or other.`,
    );
  }
  return value as FinishReason;
}

function parseUrlPayload(payload: string, kind: string, line: ScriptLine): { url: string; id: string | undefined } {
  const value = parseValue(payload);
  if (isMapping(value)) {
    const url = field(value, 'url');
    if (typeof url !== 'string') throw EchoScriptError.at(line, `${kind} requires a url field, got ${pythonRepr(value)}`);
    const id = field(value, 'id');
    if (!isNone(id) && typeof id !== 'string') throw EchoScriptError.at(line, `${kind} id must be a string when provided.`);
    return { url, id: isNone(id) ? undefined : id };
  }
  if (typeof value !== 'string') throw EchoScriptError.at(line, `${kind} expects url string or object, got ${pythonRepr(value)}`);
  return { url: value, id: undefined };
}

function parseToolCall(payload: string, line: ScriptLine): ToolCall {
  const mapping = parseMapping(payload, 'tool_call', line);
  const nested = field(mapping, 'function');
  const fn: DslMapping | undefined = isMapping(nested) && truthy(nested) ? nested : undefined;

  const id = field(mapping, 'id');
  const ownName = field(mapping, 'name');
  const name = truthy(ownName) ? ownName : fn ? field(fn, 'name') : undefined;
  let args = field(mapping, 'arguments');
  let extras = field(mapping, 'extras');
  if (fn) {
    if (isNone(args)) args = field(fn, 'arguments');
    if (isNone(extras)) extras = field(fn, 'extras');
  }

  if (typeof id !== 'string' || typeof name !== 'string') {
    throw EchoScriptError.withText(line, `tool_call requires string id and name at line ${line.number}: ${pythonStringRepr(line.raw)}`);
  }
  if (!isNone(args) && typeof args !== 'string') {
    throw EchoScriptError.withText(
      line,
      `tool_call.arguments must be a string at line ${line.number}, got ${pythonTypeName(args)}: ${pythonStringRepr(line.raw)}`,
    );
  }
  return toolCall(id, name, isNone(args) ? null : args, isMapping(extras) ? (extras as JsonObject) : undefined);
}

function parseToolCallPart(payload: string): ToolCallPart {
  const value = parseValue(payload);
  const fragment = isMapping(value) ? field(value, 'arguments_part') : value;
  if (isNone(fragment) || fragment === '') return toolCallPart(null);
  return toolCallPart(typeof fragment === 'string' ? fragment : JSON.stringify(fragment));
}

function simulatedError(payload: string, line: ScriptLine): ChatProviderError {
  if (payload === '') return EchoScriptError.withText(line, `Empty error payload at line ${line.number}: ${pythonStringRepr(line.raw)}`);
  const space = payload.indexOf(' ');
  const first = space < 0 ? payload : payload.slice(0, space);
  const message = space < 0 ? '' : payload.slice(space + 1).trim();
  switch (first.toLowerCase()) {
    case 'connection':
      return new APIConnectionError(message || 'Simulated connection error');
    case 'timeout':
      return new APITimeoutError(message || 'Simulated timeout error');
    default:
      break;
  }
  if (!/^[+-]?\d+$/.test(first)) {
    return EchoScriptError.withText(
      line,
      `Invalid error spec at line ${line.number}: expected status code or 'connection'/'timeout', got ${pythonStringRepr(first)} in ${pythonStringRepr(line.raw)}`,
    );
  }
  const statusCode = Number(first);
  return new APIStatusError(statusCode, message || `Simulated ${statusCode} error`);
}

/** Python's `is None` for a parsed value: JSON `null`, or a key that is absent. */
function isNone(value: unknown): value is null | undefined {
  return value === null || value === undefined;
}
