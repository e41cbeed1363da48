/**
 * Keeping API keys out of provider errors. A provider wraps an SDK error in a
 * {@link ChatProviderError} and keeps it as `cause`; an SDK error can hold the key anywhere (a
 * message quoting it, a response header echoing `Authorization` or `api-key`, a body), and
 * `util.inspect`, `console.error` and loggers print all of it. {@link scrubSecrets} makes a value
 * safe to keep: nothing reachable from it holds a secret.
 *
 * @module
 */

/** What replaces a secret. */
export const REDACTED_SECRET = '[REDACTED]';

/** Secrets shorter than this are ignored: replacing them would mangle ordinary text. */
export const MIN_SECRET_LENGTH = 6;

/** Secrets to remove (API keys, tokens); `null`, `undefined` and short ones are ignored. */
export type Secrets = readonly (string | null | undefined)[];

const BEARER = /\b(Bearer\s+)[A-Za-z0-9._~+/=-]{6,}/g;
/** Bounds of the walk: past them a value is replaced by a marker (never kept unchecked). */
const MAX_DEPTH = 32;
const MAX_NODES = 10_000;
const MAX_BYTES = 1 << 20;
const TRUNCATED = '[Truncated]';

/**
 * Credentials recognised by their form, whatever key was configured (e.g. any Google API key,
 * `AIza…`): every match is redacted like a secret. A pattern without the `g` flag is used as if it
 * had it.
 */
export type SecretPatterns = readonly RegExp[];

const NO_PATTERNS: SecretPatterns = Object.freeze([]);

/**
 * `text` with every secret replaced by {@link REDACTED_SECRET} — in any form {@link secretPattern}
 * finds: as it is, URL-encoded, JSON-escaped —, every `Bearer <token>` credential, whatever the
 * token, and every match of `patterns`.
 */
export function redactSecrets(text: string, secrets: Secrets, patterns: SecretPatterns = NO_PATTERNS): string {
  return redactor(secrets, patterns)(text);
}

/** {@link redactSecrets} of `secrets` and `patterns`, its pattern compiled once. */
function redactor(secrets: Secrets, patterns: SecretPatterns): (text: string) => string {
  const pattern = secretPattern(secrets.filter((secret): secret is string => typeof secret === 'string' && secret.length >= MIN_SECRET_LENGTH));
  const forms = patterns.map((form) => (form.global ? form : new RegExp(form.source, `${form.flags}g`)));
  return (text) => {
    let out = pattern === undefined ? text : text.replace(pattern, REDACTED_SECRET);
    if (out.includes('Bearer')) out = out.replace(BEARER, `$1${REDACTED_SECRET}`);
    for (const form of forms) out = out.replace(form, REDACTED_SECRET);
    return out;
  };
}

/**
 * `value` itself when nothing reachable from it holds a secret (see {@link redactSecrets}); else a
 * deep copy in which every string is redacted. Reachable means: own properties, enumerable or not,
 * symbol-keyed, getters (read once); data on its prototypes; `Headers`, `Map` and `Set` entries;
 * the bytes of buffers; a `URL`'s `href` (a URL holding a secret becomes its redacted text); and
 * so on down `cause` chains and nested objects. Copies keep their
 * prototype (`instanceof` and class names still work) unless a prototype holds data; errors stay
 * errors. Functions are kept as they are (code, not data). Cycles are kept; a graph deeper than 32
 * or larger than 10,000 objects is copied with `[Truncated]` in place of the rest.
 *
 * @param patterns credentials recognised by their form, redacted too (see {@link SecretPatterns}).
 * @example
 * throw new APIStatusError(401, redactSecrets(message, [apiKey]), { cause: scrubSecrets(sdkError, [apiKey]) });
 */
export function scrubSecrets<T>(value: T, secrets: Secrets, patterns: SecretPatterns = NO_PATTERNS): T {
  const clean = redactor(secrets, patterns);
  if (!new SecretSearch(clean).holdsSecret(value)) return value;
  return new SecretFreeCopy(clean).copy(value, 0) as T;
}

/** Whether anything reachable from a value holds a secret (or lies past the walk's bounds). */
class SecretSearch {
  readonly #seen = new Set<object>();

  constructor(private readonly clean: (text: string) => string) {}

  holdsSecret(value: unknown, depth = 0): boolean {
    if (typeof value === 'string') return this.clean(value) !== value;
    if (typeof value !== 'object' || value === null) return false;
    if (this.#seen.has(value)) return false;
    if (depth > MAX_DEPTH || this.#seen.size >= MAX_NODES) return true;
    this.#seen.add(value);
    if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) return bytesHoldSecret(value, this.clean);
    const next = (item: unknown): boolean => this.holdsSecret(item, depth + 1);
    const entries = collectionEntries(value);
    if (entries !== undefined && entries.some((entry) => entry.some(next))) return true;
    if (prototypeData(value).some(next)) return true;
    return Reflect.ownKeys(value).some((key) => next(readOwn(value, key)));
  }
}

/** A deep copy with every string redacted. */
class SecretFreeCopy {
  readonly #copies = new Map<object, unknown>();

  constructor(private readonly clean: (text: string) => string) {}

  copy(value: unknown, depth: number): unknown {
    if (typeof value === 'string') return this.clean(value);
    if (typeof value !== 'object' || value === null) return value;
    if (this.#copies.has(value)) return this.#copies.get(value);
    if (depth > MAX_DEPTH || this.#copies.size >= MAX_NODES) return TRUNCATED;
    const next = (item: unknown): unknown => this.copy(item, depth + 1);
    if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) return this.#remember(value, copyBytes(value, this.clean));
    if (isHeaders(value)) {
      const headers = this.#remember(value, new Headers());
      for (const [name, item] of value.entries()) headers.append(name, this.clean(item));
      return headers;
    }
    if (value instanceof URL) return this.#remember(value, this.clean(value.href));
    if (value instanceof Map) {
      const map = this.#remember(value, new Map<unknown, unknown>());
      for (const [key, item] of value) map.set(next(key), next(item));
      return map;
    }
    if (value instanceof Set) {
      const set = this.#remember(value, new Set<unknown>());
      for (const item of value) set.add(next(item));
      return set;
    }
    const target = this.#remember(value, emptyLike(value));
    for (const key of Reflect.ownKeys(value)) {
      if (Array.isArray(target) && key === 'length') continue;
      const descriptor = Reflect.getOwnPropertyDescriptor(value, key)!;
      Reflect.defineProperty(target, key, { value: next(readOwn(value, key)), enumerable: descriptor.enumerable ?? false, writable: true, configurable: true });
    }
    return target;
  }

  #remember<C>(original: object, copy: C): C {
    this.#copies.set(original, copy);
    return copy;
  }
}

/** An empty object to copy `value`'s own properties into: an error stays an error, an array an array. */
function emptyLike(value: object): object {
  if (Array.isArray(value)) return [];
  const fallback = value instanceof Error ? Error.prototype : Object.prototype;
  const prototype = codeOnlyPrototypes(value) ? Object.getPrototypeOf(value) : fallback;
  if (!(value instanceof Error)) return Object.create(prototype) as object;
  const error = new Error();
  for (const key of Reflect.ownKeys(error)) Reflect.deleteProperty(error, key);
  Object.setPrototypeOf(error, prototype);
  return error;
}

/** Whether every prototype of `value` (up to the built-in ones) holds only code: methods, accessors, `constructor`. */
function codeOnlyPrototypes(value: object): boolean {
  return prototypeData(value).length === 0;
}

/** The data (non-function values) held by the non-built-in prototypes of `value`. */
function prototypeData(value: object): unknown[] {
  const data: unknown[] = [];
  for (let proto: unknown = Object.getPrototypeOf(value); isUserPrototype(proto); proto = Object.getPrototypeOf(proto)) {
    for (const key of Reflect.ownKeys(proto)) {
      const descriptor = Reflect.getOwnPropertyDescriptor(proto, key);
      if (descriptor !== undefined && 'value' in descriptor && typeof descriptor.value !== 'function') data.push(descriptor.value);
    }
  }
  return data;
}

/** Prototypes that hold no secret of anyone's: the built-in ones a copy may keep. */
const BUILT_IN_PROTOTYPES = new Set<unknown>([
  null,
  Object.prototype,
  Function.prototype,
  Array.prototype,
  ...[Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError, AggregateError].map((type) => type.prototype),
]);

function isUserPrototype(proto: unknown): proto is object {
  return !BUILT_IN_PROTOTYPES.has(proto);
}

/** A fetch `Headers` (of this realm or another copy of undici: their state is private, only the entries show). */
function isHeaders(value: object): value is Headers {
  if (value instanceof Headers) return true;
  const candidate = value as { get?: unknown; entries?: unknown };
  return typeof candidate.get === 'function' && typeof candidate.entries === 'function' && Object.prototype.toString.call(value) === '[object Headers]';
}

/** The entries of a `Headers`, `Map` or `Set` (as `[key, value]` / `[value]`); `undefined` for other objects. */
function collectionEntries(value: object): unknown[][] | undefined {
  if (isHeaders(value)) return [...value.entries()];
  if (value instanceof Map) return [...value];
  if (value instanceof Set) return [...value].map((item) => [item]);
  if (value instanceof URL) return [[value.href]];
  return undefined;
}

/** An own property's value; a getter is called once (a throwing one reads as `undefined`). */
function readOwn(value: object, key: string | symbol): unknown {
  const descriptor = Reflect.getOwnPropertyDescriptor(value, key);
  if (descriptor === undefined) return undefined;
  if ('value' in descriptor) return descriptor.value;
  try {
    return descriptor.get?.call(value);
  } catch {
    return undefined;
  }
}

function bytesOf(value: ArrayBufferView | ArrayBuffer): Uint8Array {
  return value instanceof ArrayBuffer ? new Uint8Array(value) : new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
}

function bytesHoldSecret(value: ArrayBufferView | ArrayBuffer, clean: (text: string) => string): boolean {
  const bytes = bytesOf(value);
  if (bytes.byteLength > MAX_BYTES) return true;
  const text = Buffer.from(bytes).toString('latin1');
  return clean(text) !== text;
}

/** Bytes as a `Buffer` (a `Buffer` stays one) or a `Uint8Array`, redacted as text; too large ones as a marker. */
function copyBytes(value: ArrayBufferView | ArrayBuffer, clean: (text: string) => string): unknown {
  const bytes = bytesOf(value);
  if (bytes.byteLength > MAX_BYTES) return TRUNCATED;
  const redacted = clean(Buffer.from(bytes).toString('latin1'));
  return Buffer.isBuffer(value) ? Buffer.from(redacted, 'latin1') : new Uint8Array(Buffer.from(redacted, 'latin1'));
}

/** Options of {@link secretPattern}. */
export interface SecretPatternOptions {
  /** Match each form as it reads inside a string of serialized JSON text (escaped once more): a log line. */
  readonly onJsonLine?: boolean;
}

/**
 * One global pattern matching any of `secrets` (empty ones ignored; longest first, so that a secret
 * containing another is matched whole) whatever form each of its characters takes: literal; its
 * UTF-8 bytes percent-encoded in either hex case (`+` for a space, as `URLSearchParams` writes it);
 * JSON-escaped once or twice (a JSON text inside a JSON string) with its usual escape, `\/` for `/`,
 * or `\uXXXX` in either hex case. `undefined` for no secret. {@link redactSecrets} and the logging
 * plugin match with it.
 */
export function secretPattern(secrets: readonly string[], options: SecretPatternOptions = {}): RegExp | undefined {
  const sorted = secrets.filter((secret) => secret !== '').sort((a, b) => b.length - a.length);
  if (sorted.length === 0) return undefined;
  const sources = (char: string): string[] => {
    const forms = characterForms(char);
    return [...new Set((options.onJsonLine === true ? forms.map(jsonEscapeForm) : forms).map(formSource))];
  };
  // Within a character, longer forms first: `\\` is one escaped backslash, not a backslash and the start of an escape.
  const group = (char: string): string => `(?:${sources(char).sort((a, b) => b.length - a.length).join('|')})`;
  return new RegExp(sorted.map((secret) => [...secret].map(group).join('')).join('|'), 'g');
}

/** How a character is written: literal text, and hexadecimal digits (matched in either case). */
type Form = readonly (string | { readonly hex: string })[];

/** The forms of `char` in a string: itself, percent-encoded (or `+` for a space), JSON-escaped once and twice. */
function characterForms(char: string): Form[] {
  const plain: Form[] = [[char]];
  const code = char.charCodeAt(0);
  // A lone surrogate has no UTF-8 form.
  if (!(char.length === 1 && code >= 0xd800 && code <= 0xdfff)) plain.push([...new TextEncoder().encode(char)].flatMap((byte) => ['%', ...hexDigits(byte, 2)]));
  if (char === ' ') plain.push(['+']);
  const unicode: Form = [...Array(char.length).keys()].flatMap((i) => ['\\u', ...hexDigits(char.charCodeAt(i), 4)]);
  const escaped: Form[] = [[jsonEscape(char)], unicode, ...(char === '/' ? [['\\/']] : [])];
  return [...plain, ...escaped, ...escaped.map(jsonEscapeForm)];
}

function hexDigits(value: number, width: number): { readonly hex: string }[] {
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
  const source = (token: Form[number]): string =>
    typeof token === 'string' ? token.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : /[a-f]/.test(token.hex) ? `[${token.hex}${token.hex.toUpperCase()}]` : token.hex;
  return form.map(source).join('');
}
