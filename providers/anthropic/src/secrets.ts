/** What stands in for a secret in text this package produces. */
export const REDACTED = '[REDACTED]';

/** Anthropic API keys and tokens (`sk-ant-api03-…`, `sk-ant-oat01-…`), whoever's they are. */
const ANTHROPIC_KEY = /sk-ant-[A-Za-z0-9_-]{8,}/g;

/**
 * The secrets of one provider (its API key, credential-like default headers), and the redaction of
 * them from text: every occurrence of each, plus anything shaped like an Anthropic key. Secrets
 * shorter than 6 characters are not looked for (they would mangle ordinary text).
 */
export class Secrets {
  readonly #values: readonly string[];

  constructor(values: readonly (string | null | undefined)[]) {
    this.#values = values.filter((value): value is string => typeof value === 'string' && value.length >= 6);
  }

  /** `text` with the secrets replaced by {@link REDACTED}. */
  redact(text: string): string {
    let out = text;
    for (const secret of this.#values) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    return out.replace(ANTHROPIC_KEY, REDACTED);
  }

  /** Whether `text` holds a secret. */
  foundIn(text: string): boolean {
    return this.redact(text) !== text;
  }

  /** What `JSON.stringify` and `util.inspect` show: never the values. */
  toJSON(): string {
    return `Secrets(${this.#values.length})`;
  }
}
