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

/** Escapes U+0000–U+001F inside string literals of a JSON text, leaving everything else as it is. */
function escapeControlCharactersInStrings(text: string): string {
  let out = '';
  let inString = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === 0x5c) i++; // skip the escaped character
      else if (code === 0x22) inString = false;
      else if (code < 0x20) {
        out += text.slice(start, i) + '\\u' + code.toString(16).padStart(4, '0');
        start = i + 1;
      }
    } else if (code === 0x22) inString = true;
  }
  return start === 0 ? text : out + text.slice(start);
}
