import { expect } from 'chai';
import fc from 'fast-check';
import { REDACTED, SecretScrubber } from '../index.js';
import { stringsIn } from './support.js';

/** How one character of a secret is written: each encoder reads back to the character. */
const CHARACTER_ENCODINGS = {
  raw: (char: string) => char,
  percentUpper: (char: string) => percent(char).toUpperCase(),
  percentLower: (char: string) => percent(char).toLowerCase(),
  unicodeEscapeLower: (char: string) => unicodeEscape(char).toLowerCase().replaceAll('\\u', '\\u'),
  unicodeEscapeUpper: (char: string) => unicodeEscape(char).toUpperCase().replaceAll('\\U', '\\u'),
  /** As JSON.stringify writes it: itself, or its short (or \u) escape where JSON needs one. */
  jsonShort: (char: string) => JSON.stringify(char).slice(1, -1),
} as const;
type CharacterEncoding = keyof typeof CHARACTER_ENCODINGS;
const PERCENT_ENCODINGS = ['raw', 'percentUpper', 'percentLower'] as const satisfies readonly CharacterEncoding[];
const JSON_ENCODINGS = ['jsonShort', 'unicodeEscapeLower', 'unicodeEscapeUpper'] as const satisfies readonly CharacterEncoding[];

/** Every UTF-8 byte of `char` as `%XX`. */
function percent(char: string): string {
  return [...new TextEncoder().encode(char)].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');
}

/** Every UTF-16 code unit of `char` as `\uXXXX`. */
function unicodeEscape(char: string): string {
  let out = '';
  for (let i = 0; i < char.length; i++) out += `\\u${char.charCodeAt(i).toString(16).padStart(4, '0')}`;
  return out;
}

/** `secret` with each character written by the encoding chosen for it (cycling through `choices`). */
function encodeEach(secret: string, choices: readonly CharacterEncoding[]): string {
  return [...secret].map((char, i) => CHARACTER_ENCODINGS[choices[i % choices.length]!](char)).join('');
}

/** Characters that URL and JSON encoders treat differently (`encodeURIComponent` vs `URLSearchParams`, escapes). */
const awkwardCharacter = fc.constantFrom(...'aZ09 ~!\'()*+%&=?/\\"-_.:;\n\tü€😀');
/** Secrets: API-key-like, awkward characters, and any text (quotes, backslashes, controls, non-ASCII, astral). */
const secretArbitrary = fc
  .oneof(
    fc.stringMatching(/^[a-z]{2,4}-[A-Za-z0-9_-]{8,24}$/),
    fc.string({ unit: awkwardCharacter, minLength: 4, maxLength: 16 }),
    fc.string({ unit: 'binary', minLength: 4, maxLength: 16 }),
  )
  .filter((secret) => [...secret].length >= 4 && !REDACTED.includes(secret) && secret.trim() === secret);
/** Text around a secret. */
const textArbitrary = fc.string({ unit: 'grapheme-ascii', maxLength: 12 });

function expectRedacted(decoded: string, secret: string): void {
  expect(decoded.includes(secret), `secret ${JSON.stringify(secret)} in ${JSON.stringify(decoded)}`).to.equal(false);
  expect(decoded).to.include(REDACTED);
}

describe('SecretScrubber: encodings of a secret (properties)', () => {
  it('finds a secret in a query string built by URLSearchParams (spaces as +, its own escape set)', () => {
    fc.assert(
      fc.property(secretArbitrary, textArbitrary, textArbitrary, (secret, before, after) => {
        const scrubber = new SecretScrubber({ secrets: [secret] });
        const query = new URLSearchParams({ user: before, key: `${before}${secret}${after}`, after }).toString();
        const scrubbed = new URLSearchParams(scrubber.scrubString(query));
        expectRedacted(scrubbed.get('key') ?? '', secret);
        for (const value of scrubbed.values()) expect(value).not.to.include(secret);
      }),
    );
  });

  it('finds a secret percent-encoded character by character, upper- or lowercase hex, mixed with raw characters', () => {
    fc.assert(
      fc.property(secretArbitrary, textArbitrary, fc.array(fc.constantFrom(...PERCENT_ENCODINGS), { minLength: 1, maxLength: 5 }), (secret, text, choices) => {
        const scrubber = new SecretScrubber({ secrets: [secret] });
        const url = `https://example.test/v1?q=${encodeURIComponent(text)}&key=${encodeEach(secret, choices)}`;
        const scrubbed = scrubber.scrubString(url);
        expectRedacted(decodeURIComponent(scrubbed), secret);
      }),
    );
  });

  it('finds a secret in JSON text (tool arguments) with any character \\u-escaped (either hex case) or short-escaped', () => {
    fc.assert(
      fc.property(secretArbitrary, textArbitrary, fc.array(fc.constantFrom(...JSON_ENCODINGS), { minLength: 1, maxLength: 5 }), (secret, text, choices) => {
        const scrubber = new SecretScrubber({ secrets: [secret] });
        const skeleton = `{"note":${JSON.stringify(text)},"key":""}`;
        const logLine = (args: string): string => `${JSON.stringify({ event: 'tool.call', arguments: args, n: 1 })}\n`;
        // The secret is in the key only, not in the JSON or the log line around it (a secret "argu"
        // is rightly redacted in the field name "arguments" too).
        fc.pre(scrubber.scrubString(skeleton) === skeleton && scrubber.scrubLine(logLine(skeleton)) === logLine(skeleton));
        const args = `{"note":${JSON.stringify(text)},"key":"${encodeEach(secret, choices)}"}`;
        expect((JSON.parse(args) as { key: string }).key).to.equal(secret); // the encoding reads back
        const scrubbed = scrubber.scrubString(args);
        expectRedacted((JSON.parse(scrubbed) as { key: string }).key, secret);
        // The same arguments on a serialized log line: the line stays valid JSON, the secret is gone.
        const line = scrubber.scrubLine(logLine(args));
        const parsed = JSON.parse(line) as { arguments: string };
        for (const text of stringsIn(parsed)) expect(text).not.to.include(secret);
        expectRedacted((JSON.parse(parsed.arguments) as { key: string }).key, secret);
      }),
    );
  });

  it('keeps a line valid JSON when a secret appears right after an escape (never replaces half of one)', () => {
    // "u0041bc" and "41bc" occur inside the escape \u0041; "nab" right after the escape \n.
    for (const secret of ['u0041bc', '41bc', 'nab', '0041']) {
      const scrubber = new SecretScrubber({ secrets: [secret] });
      const record = { a: '\u0041bc', b: '\nab', c: `x${secret}y` };
      const line = scrubber.scrubLine(JSON.stringify(record));
      expect(JSON.parse(line), secret).to.deep.equal({ ...record, c: `x${REDACTED}y` });
    }
  });
});
