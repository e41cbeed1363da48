import type { JsonValue } from '../message/parts.js';

/** The outcome of {@link parseToolArguments}. */
export type ParsedArguments = { readonly ok: true; readonly value: JsonValue } | { readonly ok: false; readonly error: string };

/**
 * Parses the JSON arguments of a tool call the way the original kosong does: `null` and `''` mean
 * `{}`, and raw control characters (a literal newline or tab) inside JSON strings are tolerated,
 * as models emit them. Keys such as `__proto__` become plain own properties (JSON.parse never
 * touches a prototype).
 */
export function parseToolArguments(raw: string | null): ParsedArguments {
  if (raw === null || raw === '') return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(raw) as JsonValue };
  } catch (error) {
    const escaped = escapeControlCharactersInStrings(raw);
    if (escaped !== raw) {
      try {
        return { ok: true, value: JSON.parse(escaped) as JsonValue };
      } catch {
        // fall through: report the error of the original text
      }
    }
    return { ok: false, error: (error as Error).message };
  }
}

/** A JSON string literal (unrolled so that long strings do not exhaust the regex engine's stack). */
const STRING_LITERAL = /"[^"\\]*(?:\\[\s\S][^"\\]*)*"/g;
/** An escape pair (kept as it is, valid or not) or a raw control character (to escape). */
// eslint-disable-next-line no-control-regex -- control characters are exactly what this escapes
const ESCAPE_OR_CONTROL = /\\[\s\S]|[\u0000-\u001f]/g;

/** Escapes U+0000–U+001F inside string literals of a JSON text, leaving everything else as it is. */
function escapeControlCharactersInStrings(text: string): string {
  return text.replace(STRING_LITERAL, (literal) =>
    literal.replace(ESCAPE_OR_CONTROL, (match) =>
      match.length === 2 ? match : `\\u${match.charCodeAt(0).toString(16).padStart(4, '0')}`,
    ),
  );
}
