/**
 * The forms one character of a secret takes in logged text, as regular-expression sources: a
 * secret is found whatever form each of its characters is in (a key with only its first character
 * `\u`-escaped is still the key).
 */

/** One hexadecimal digit of an escape, matched in either case. */
interface HexDigit {
  readonly hex: string;
}

/** How a character is written: literal text and hexadecimal digits. */
type Form = readonly (string | HexDigit)[];

/**
 * The forms of `char` in a string value: itself; its UTF-8 bytes percent-encoded (either hex case,
 * and `+` for a space, as `URLSearchParams` writes it); JSON-escaped once (its usual escape, `\/`
 * for `/`, or `\uXXXX` in either hex case) and twice (a JSON text inside a JSON text, e.g. tool
 * arguments in a logged message).
 */
export function valueFormSources(char: string): string[] {
  return unique(valueForms(char).map(formSource));
}

/** The forms of `char` on a serialized JSON line: each of its value forms, JSON-escaped once more. */
export function lineFormSources(char: string): string[] {
  return unique(valueForms(char).map(jsonEscapeForm).map(formSource));
}

function valueForms(char: string): Form[] {
  const plain: Form[] = [[char]];
  const percent = percentEncoded(char);
  if (percent !== undefined) plain.push(percent);
  if (char === ' ') plain.push(['+']);
  const escaped: Form[] = [[jsonEscape(char)], unicodeEscaped(char)];
  if (char === '/') escaped.push(['\\/']);
  return [...plain, ...escaped, ...escaped.map(jsonEscapeForm)];
}

/** `%XX` for each UTF-8 byte; `undefined` for a lone surrogate (it has no UTF-8 form). */
function percentEncoded(char: string): Form | undefined {
  const code = char.charCodeAt(0);
  if (char.length === 1 && code >= 0xd800 && code <= 0xdfff) return undefined;
  return [...new TextEncoder().encode(char)].flatMap((byte) => ['%', ...hexDigits(byte, 2)]);
}

/** `\uXXXX` for each UTF-16 code unit (two for a character outside the BMP). */
function unicodeEscaped(char: string): Form {
  const form: (string | HexDigit)[] = [];
  for (let i = 0; i < char.length; i++) form.push('\\u', ...hexDigits(char.charCodeAt(i), 4));
  return form;
}

function hexDigits(value: number, width: number): HexDigit[] {
  return [...value.toString(16).padStart(width, '0')].map((hex) => ({ hex }));
}

function jsonEscape(text: string): string {
  return JSON.stringify(text).slice(1, -1);
}

/** `form` as it reads inside a JSON string (its literal text escaped; hex digits need no escape). */
function jsonEscapeForm(form: Form): Form {
  return form.map((token) => (typeof token === 'string' ? jsonEscape(token) : token));
}

function formSource(form: Form): string {
  return form
    .map((token) => {
      if (typeof token === 'string') return token.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      return /[a-f]/.test(token.hex) ? `[${token.hex}${token.hex.toUpperCase()}]` : token.hex;
    })
    .join('');
}

function unique(sources: readonly string[]): string[] {
  return [...new Set(sources)];
}
