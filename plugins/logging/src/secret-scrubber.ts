import { secretPattern } from '@kosong/core/provider-kit';
import { errorFields, isErrorLike, readProperty, setField } from './error-fields.js';
import { DEFAULT_REDACT_KEYS, REDACTED } from './redaction-defaults.js';

/** Options of a {@link SecretScrubber}. */
export interface SecretScrubberOptions {
  /** Literal secret values (API keys, tokens) to replace wherever they occur. Empty strings are ignored. */
  readonly secrets?: readonly string[];
  /** Keys whose values are replaced at any depth; default {@link DEFAULT_REDACT_KEYS}. */
  readonly redactKeys?: readonly string[];
  /** The replacement; default {@link REDACTED}. */
  readonly censor?: string;
  /** Strings longer than this are cut (after scrubbing) by {@link SecretScrubber.scrubValue}; default 8192. */
  readonly maxStringLength?: number;
}

const MAX_DEPTH = 10;
const MAX_ITEMS = 100;
const MAX_KEYS = 100;
const DEFAULT_MAX_STRING_LENGTH = 8_192;
/** Key names whose verdict (scrubbed name, or sensitive) is kept; past it the cache starts over. */
const KEY_CACHE_SIZE = 1_024;

/**
 * Removes configured secrets from what is logged, at two levels:
 *
 * - {@link SecretScrubber.scrubValue} turns any value into plain JSON data (errors become their
 *   fields, with causes; cycles, depth and sizes are bounded), replacing every occurrence of a secret
 *   in every string, key names included, and the values of sensitive keys ({@link DEFAULT_REDACT_KEYS});
 * - {@link SecretScrubber.scrubLine} replaces secrets in a serialized JSON log line, as a last pass
 *   over everything that reached the line, whatever added it.
 *
 * A secret is matched by core's `secretPattern` (the matcher core's `redactSecrets` uses), whatever
 * form each of its characters takes: literal, percent-encoded (either hex case, `+` for a space:
 * `encodeURIComponent` and `URLSearchParams` forms), JSON-escaped once or twice (a JSON text inside a
 * logged string) with the usual escapes or `\uXXXX` in either hex case. Longer secrets are replaced
 * first, so a secret that contains another is replaced whole. Unlike `redactSecrets`, short secrets
 * count too, and the censor can be chosen.
 */
export class SecretScrubber {
  /** The replacement text. */
  readonly censor: string;
  /** Whether any secret is configured (without one, the string passes are no-ops). */
  readonly hasSecrets: boolean;
  readonly #valuePattern: RegExp | undefined;
  readonly #linePattern: RegExp | undefined;
  readonly #keys: ReadonlySet<string>;
  readonly #maxStringLength: number;
  readonly #replace = (): string => this.censor;
  /**
   * Each key seen so far: its scrubbed name, or `null` when its values are redacted. Records repeat
   * the same few keys; normalizing and scrubbing each anew was most of what a record cost.
   */
  readonly #keyVerdicts = new Map<string, string | null>();

  /** @throws {TypeError} if a secret is not a string. */
  constructor(options: SecretScrubberOptions = {}) {
    this.censor = options.censor ?? REDACTED;
    this.#maxStringLength = options.maxStringLength ?? DEFAULT_MAX_STRING_LENGTH;
    this.#keys = new Set((options.redactKeys ?? DEFAULT_REDACT_KEYS).map(normalizeKey));
    const secrets = (options.secrets ?? []).filter((secret, i) => {
      if (typeof secret !== 'string') throw new TypeError(`secrets[${i}] must be a string, got ${typeof secret}`);
      return secret !== '';
    });
    this.hasSecrets = secrets.length > 0;
    this.#valuePattern = secretPattern(secrets);
    this.#linePattern = secretPattern(secrets, { onJsonLine: true });
  }

  /** `text` with every secret replaced. */
  scrubString(text: string): string {
    return this.#valuePattern === undefined ? text : text.replace(this.#valuePattern, this.#replace);
  }

  /** A serialized JSON log line with every secret replaced; the line stays valid JSON. */
  scrubLine(line: string): string {
    const pattern = this.#linePattern;
    if (pattern === undefined) return line;
    // Only matches that start where a JSON string's character starts: replacing one that starts
    // inside an escape (`\n`, `\u0041`) would break the line (and the escape is not the secret).
    let out = '';
    let copied = 0;
    pattern.lastIndex = 0;
    for (let match = pattern.exec(line); match !== null; match = pattern.exec(line)) {
      if (insideEscape(line, match.index)) {
        pattern.lastIndex = match.index + 1;
        continue;
      }
      out += line.slice(copied, match.index) + this.censor;
      copied = pattern.lastIndex;
    }
    return copied === 0 ? line : out + line.slice(copied);
  }

  /** Whether the values of `key` are redacted (compared without case, `-` and `_`). */
  isSensitiveKey(key: string): boolean {
    return this.#keys.has(normalizeKey(key));
  }

  /**
   * A plain-data copy of `value` that is safe to log: strings scrubbed (then cut to the maximum
   * length), sensitive keys redacted, errors expanded to their fields (see `errorFields`),
   * `Map`s and `Headers` to objects, typed arrays to a size, functions and symbols dropped,
   * cycles, depth, array and object sizes bounded.
   */
  scrubValue(value: unknown): unknown {
    return this.#walk(value, 0, []);
  }

  /**
   * Scrubs a record the caller built to be logged and owns (a fresh plain object, shared with nobody)
   * as {@link SecretScrubber.scrubValue} would, but in place: its own fields are replaced where they
   * need it (a renamed or redacted key moves to the end) instead of copied into a new object, and
   * numbers, booleans and `null` are left as they are. Values inside it are copied as `scrubValue`
   * copies them. Returns the record.
   */
  scrubRecord<T extends Record<string, unknown>>(record: T): T {
    const fields = record as Record<string, unknown>;
    const path: object[] = [record];
    // The keys first: a renamed key is added again, and must not be scrubbed twice.
    for (const key of Object.keys(fields)) {
      const item = fields[key];
      const verdict = this.#keyVerdict(key);
      if (verdict !== key) {
        delete fields[key];
        if (item === undefined) continue;
        if (verdict === null) setField(fields, this.scrubString(key), item === null ? null : this.censor);
        else setField(fields, verdict, this.#field(item, path));
        continue;
      }
      const scrubbed = this.#field(item, path);
      if (scrubbed !== item) fields[key] = scrubbed;
    }
    return record;
  }

  /** A field's value scrubbed: numbers, booleans and `null` carry no secret and are kept without a walk. */
  #field(item: unknown, path: object[]): unknown {
    return typeof item === 'boolean' || item === null || (typeof item === 'number' && Number.isFinite(item)) ? item : this.#walk(item, 1, path);
  }

  /** What a key becomes in scrubbed data: its name with secrets replaced, or `null` if its values are redacted. */
  #keyVerdict(key: string): string | null {
    const known = this.#keyVerdicts.get(key);
    if (known !== undefined) return known;
    const verdict = this.isSensitiveKey(key) ? null : this.scrubString(key);
    if (this.#keyVerdicts.size >= KEY_CACHE_SIZE) this.#keyVerdicts.clear();
    this.#keyVerdicts.set(key, verdict);
    return verdict;
  }

  #string(text: string): string {
    const scrubbed = this.scrubString(text);
    return scrubbed.length > this.#maxStringLength ? `${scrubbed.slice(0, this.#maxStringLength)}…[truncated]` : scrubbed;
  }

  /** `path`: the objects being walked, outermost first (at most {@link MAX_DEPTH}: a short list beats a set). */
  #walk(value: unknown, depth: number, path: object[]): unknown {
    switch (typeof value) {
      case 'string':
        return this.#string(value);
      case 'number':
        return Number.isFinite(value) ? value : String(value);
      case 'boolean':
        return value;
      case 'bigint':
        return value.toString();
      case 'undefined':
      case 'function':
      case 'symbol':
        return undefined;
    }
    if (value === null) return null;
    const object = value as object;
    if (path.includes(object)) return '[Circular]';
    if (depth >= MAX_DEPTH) return '[Truncated]';
    path.push(object);
    try {
      return this.#walkObject(object, depth, path);
    } finally {
      path.pop();
    }
  }

  #walkObject(object: object, depth: number, path: object[]): unknown {
    if (Array.isArray(object) || object instanceof Set) {
      const items = Array.isArray(object) ? (object as unknown[]) : [...(object as Set<unknown>)];
      const out: unknown[] = [];
      const count = Math.min(items.length, MAX_ITEMS);
      for (let i = 0; i < count; i++) out.push(this.#walk(items[i], depth + 1, path) ?? null);
      if (items.length > count) out.push(`[${items.length - count} more]`);
      return out;
    }
    if (ArrayBuffer.isView(object)) return `[${object.constructor.name} ${object.byteLength} bytes]`;
    if (object instanceof Date) return Number.isNaN(object.getTime()) ? 'Invalid Date' : object.toISOString();
    const source = isErrorLike(object) ? errorFields(object) : isMapLike(object) ? mapEntries(object) : object;
    const out: Record<string, unknown> = {};
    const keys = Object.keys(source);
    const count = Math.min(keys.length, MAX_KEYS);
    for (let i = 0; i < count; i++) {
      const key = keys[i]!;
      const item = readProperty(source, key);
      if (item === undefined) continue;
      const verdict = this.#keyVerdict(key);
      if (verdict === null) {
        setField(out, this.scrubString(key), item === null ? null : this.censor);
        continue;
      }
      // Numbers, booleans and null carry no secret: kept as they are, without a walk.
      const walked = typeof item === 'boolean' || item === null || (typeof item === 'number' && Number.isFinite(item)) ? item : this.#walk(item, depth + 1, path);
      if (walked !== undefined) setField(out, verdict, walked);
    }
    if (keys.length > count) out['[more]'] = `${keys.length - count} more keys`;
    return out;
  }
}

/** A `Map`, or a `Headers`-like object (`get`, `has`, `entries`). */
function isMapLike(object: object): object is { entries(): Iterable<[unknown, unknown]> } {
  if (object instanceof Map) return true;
  const candidate = object as { get?: unknown; has?: unknown; entries?: unknown };
  return typeof candidate.get === 'function' && typeof candidate.has === 'function' && typeof candidate.entries === 'function';
}

function mapEntries(map: { entries(): Iterable<[unknown, unknown]> }): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  let count = 0;
  try {
    for (const [key, value] of map.entries()) {
      if (count++ >= MAX_KEYS) break;
      setField(out, String(key), value);
    }
  } catch {
    // an iterator that throws: log what was read
  }
  return out;
}

function normalizeKey(key: string): string {
  return key.toLowerCase().replace(/[-_]/g, '');
}

/** Whether `index` of a serialized JSON line is inside an escape sequence (after an odd run of backslashes, or in `\uXXXX`). */
function insideEscape(line: string, index: number): boolean {
  let start = index;
  // Up to three hex digits and a `u` may be the start of a `\uXXXX` before the index.
  for (let i = 0; i < 3 && start > 0 && isHexDigit(line.charCodeAt(start - 1)); i++) start--;
  const candidates = start < index && start > 0 && line[start - 1] === 'u' ? [index, start - 1] : [index];
  return candidates.some((position) => {
    let backslashes = 0;
    while (position - backslashes > 0 && line[position - backslashes - 1] === '\\') backslashes++;
    return backslashes % 2 === 1;
  });
}

function isHexDigit(code: number): boolean {
  return (code >= 48 && code <= 57) || ((code | 32) >= 97 && (code | 32) <= 102);
}
