import type { JsonValue } from '../message/parts.js';

/** The outcome of {@link parseToolArguments}. */
export type ParsedArguments = { readonly ok: true; readonly value: JsonValue } | { readonly ok: false; readonly error: string };

/** Options of {@link parseToolArguments}. */
export interface ParseToolArgumentsOptions {
  /**
   * The longest argument text accepted, in UTF-16 code units; longer ones are an error without being
   * parsed. Default: {@link MAX_TOOL_ARGUMENTS_LENGTH}.
   */
  readonly maxLength?: number;
}

/**
 * The default bound on the length of a tool call's arguments: 16 Mi UTF-16 code units, far more
 * than any model writes in one call (a 1M-token context is about 4 M characters), and little
 * enough that parsing it blocks the event loop for a fraction of a second.
 */
export const MAX_TOOL_ARGUMENTS_LENGTH = 16 * 1024 * 1024;

/**
 * Parses the JSON arguments of a tool call the way the original kosong does: `null` and `''` mean
 * `{}`, and raw control characters (a literal newline or tab) inside JSON strings are tolerated,
 * as models emit them. Keys such as `__proto__` become plain own properties (JSON.parse never
 * touches a prototype).
 *
 * Never throws, and runs in time linear in the length of `raw` whatever it holds (the repair of
 * control characters is one scan, with no regular expression that could backtrack or exhaust the
 * stack). A text longer than `maxLength` is an error, not parsed.
 */
export function parseToolArguments(raw: string | null, options: ParseToolArgumentsOptions = {}): ParsedArguments {
  if (raw === null || raw === '') return { ok: true, value: {} };
  const maxLength = options.maxLength ?? MAX_TOOL_ARGUMENTS_LENGTH;
  if (raw.length > maxLength) {
    return { ok: false, error: `the arguments are ${raw.length} characters long, more than the limit of ${maxLength}` };
  }
  try {
    return { ok: true, value: JSON.parse(raw) as JsonValue };
  } catch (error) {
    try {
      if (CONTROL_CHARACTER.test(raw)) {
        const escaped = escapeControlCharactersInStrings(raw);
        if (escaped !== raw) return { ok: true, value: JSON.parse(escaped) as JsonValue };
      }
    } catch {
      // fall through: report the error of the original text
    }
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}

/** Any raw control character (a single character class: no backtracking, no recursion). */
// eslint-disable-next-line no-control-regex -- control characters are exactly what the repair escapes
const CONTROL_CHARACTER = /[\u0000-\u001f]/;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** `\u0000` … `\u001f`, by code. */
const ESCAPES = Array.from({ length: 0x20 }, (_, code) => `\\u${code.toString(16).padStart(4, '0')}`);

/**
 * Escapes U+0000–U+001F inside string literals of a JSON text, leaving everything else as it is
 * (escape pairs too, valid or not, so an invalid text stays invalid). One scan; returns `text`
 * itself when there is nothing to escape.
 */
function escapeControlCharactersInStrings(text: string): string {
  let out = '';
  let copiedUpTo = 0;
  let changed = false;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (!inString) {
      if (code === QUOTE) inString = true;
    } else if (code === BACKSLASH) {
      i++; // the escaped character is kept as it is, whatever it is
    } else if (code === QUOTE) {
      inString = false;
    } else if (code < 0x20) {
      out += text.slice(copiedUpTo, i) + ESCAPES[code]!;
      copiedUpTo = i + 1;
      changed = true;
    }
  }
  return changed ? out + text.slice(copiedUpTo) : text;
}
