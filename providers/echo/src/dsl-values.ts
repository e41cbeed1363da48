/**
 * Value syntax of the echo DSL (kosong spec §8.2): quoted strings, JSON-or-text values and
 * JSON-object-or-`key=value` mappings.
 *
 * @module
 */
import { EchoScriptError, type ScriptLine } from './echo-script-error.js';
import { pythonRepr } from './python-repr.js';

/** A JSON object as the DSL reads it (own properties only are looked at). */
export type DslMapping = { readonly [key: string]: unknown };

/** Removes one pair of matching surrounding quotes (`'…'` or `"…"`); anything else is returned as is. */
export function stripQuotes(value: string): string {
  if (value.length >= 2 && value[0] === value[value.length - 1] && (value[0] === "'" || value[0] === '"')) {
    return value.slice(1, -1);
  }
  return value;
}

/**
 * Reads one value: trimmed; empty, `null` or `none` (any case) is `null`; valid JSON is the parsed
 * value; anything else is the text with {@link stripQuotes} applied.
 */
export function parseValue(raw: string): unknown {
  const text = raw.trim();
  if (text === '') return null;
  const lowered = text.toLowerCase();
  if (lowered === 'null' || lowered === 'none') return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return stripQuotes(text);
  }
}

/**
 * Reads a mapping: a JSON object, or `key=value` tokens separated by spaces or commas (each value
 * read with {@link parseValue}). `context` names the directive in error messages.
 *
 * @throws {@link EchoScriptError} for JSON that is not an object, a token without `=`, or nothing at all.
 */
export function parseMapping(raw: string, context: string, line: ScriptLine): DslMapping {
  const text = raw.trim();
  let loaded: unknown;
  try {
    loaded = JSON.parse(text) as unknown;
  } catch {
    loaded = null;
  }
  if (isMapping(loaded)) return loaded;
  if (loaded !== null) throw EchoScriptError.at(line, `${context} payload must be an object, got ${pythonRepr(loaded)}`);

  const mapping = Object.create(null) as Record<string, unknown>;
  let empty = true;
  for (const token of text.replaceAll(',', ' ').split(/\s+/)) {
    if (token === '') continue;
    const eq = token.indexOf('=');
    if (eq < 0) throw EchoScriptError.at(line, `Invalid token '${token}' in ${context} payload.`);
    mapping[token.slice(0, eq).trim()] = parseValue(token.slice(eq + 1));
    empty = false;
  }
  if (empty) throw EchoScriptError.at(line, `${context} payload cannot be empty.`);
  return mapping;
}

/** Whether a parsed value is a JSON object (not null, not an array). */
export function isMapping(value: unknown): value is DslMapping {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The own property `key` of a mapping, or `undefined` (never an inherited one such as `toString`). */
export function field(mapping: DslMapping, key: string): unknown {
  return Object.hasOwn(mapping, key) ? mapping[key] : undefined;
}

/** Python truthiness of a parsed value: `null`, `false`, `0`, `''`, `[]` and `{}` are false. */
export function truthy(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0;
  if (isMapping(value)) return Object.keys(value).length > 0;
  return Boolean(value);
}
