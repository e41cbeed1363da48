/**
 * Python's `repr()` of JSON-like values, so that the echo DSL's error messages read exactly as in
 * the original kosong (`'foo bar'`, `{'url': 1}`, `None`, `True`). Numbers print as JavaScript
 * prints them (`1.0` parses to `1`, so it prints as `1`).
 *
 * @module
 */

/** Python's `repr()` of a string: single quotes unless the text has `'` and no `"`; escapes as Python does. */
export function pythonStringRepr(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = quote;
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (char === '\\' || char === quote) out += `\\${char}`;
    else if (char === '\n') out += '\\n';
    else if (char === '\r') out += '\\r';
    else if (char === '\t') out += '\\t';
    else if (code < 0x20 || (code >= 0x7f && code <= 0xa0) || code === 0xad) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += char;
  }
  return out + quote;
}

/** Python's `repr()` of a value parsed from JSON (or a string): `None`, `True`, lists, dicts. */
export function pythonRepr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'string') return pythonStringRepr(value);
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : value > 0 ? 'inf' : value < 0 ? '-inf' : 'nan';
  if (Array.isArray(value)) return `[${value.map(pythonRepr).join(', ')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    return `{${entries.map(([key, inner]) => `${pythonStringRepr(key)}: ${pythonRepr(inner)}`).join(', ')}}`;
  }
  return String(value);
}

/** Python's `type(value).__name__` of a value parsed from JSON. */
export function pythonTypeName(value: unknown): string {
  if (value === null || value === undefined) return 'NoneType';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  if (typeof value === 'string') return 'str';
  if (Array.isArray(value)) return 'list';
  return 'dict';
}
