/** What replaces a secret in the errors of this package. */
export const REDACTED = '[REDACTED]';

/** Secrets shorter than this are not redacted: replacing them would mangle ordinary text. */
const MIN_SECRET_LENGTH = 6;

/** Google API keys (`AIza` + 35 characters), whatever key was configured. */
const GOOGLE_API_KEY = /\bAIza[0-9A-Za-z_-]{35}\b/g;
/** OAuth access tokens of Google (Vertex AI with Application Default Credentials). */
const GOOGLE_ACCESS_TOKEN = /\bya29\.[0-9A-Za-z._-]{10,}/g;

/**
 * `text` with every occurrence of each secret replaced by {@link REDACTED}, and anything that looks
 * like a Google API key, a Google access token or a `Bearer` credential as well.
 */
export function redact(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret !== undefined && secret.length >= MIN_SECRET_LENGTH && out.includes(secret)) out = out.split(secret).join(REDACTED);
  }
  return out
    .replace(GOOGLE_API_KEY, REDACTED)
    .replace(GOOGLE_ACCESS_TOKEN, REDACTED)
    .replace(/\b(Bearer\s+)[A-Za-z0-9._~+/=-]{6,}/g, `$1${REDACTED}`);
}

/** Whether {@link redact} would change `text`. */
export function containsSecret(text: string, secrets: readonly (string | undefined)[]): boolean {
  return redact(text, secrets) !== text;
}
