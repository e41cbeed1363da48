/** What replaces a secret in text this package produces. */
export const REDACTED = '[REDACTED]';

/** Secrets shorter than this are not redacted: replacing them would mangle ordinary text. */
const MIN_SECRET_LENGTH = 6;

/**
 * Replaces every occurrence of each secret (an API key) in `text` with {@link REDACTED}, and any
 * `Bearer <token>` credential as well, whatever the token.
 */
export function redact(text: string, secrets: readonly (string | null | undefined)[]): string {
  let out = text;
  for (const secret of secrets) {
    if (typeof secret === 'string' && secret.length >= MIN_SECRET_LENGTH) out = out.split(secret).join(REDACTED);
  }
  return out.replace(/\b(Bearer\s+)[A-Za-z0-9._~+/=-]{6,}/g, `$1${REDACTED}`);
}

/** Whether `text` contains one of the secrets (as {@link redact} would replace it). */
export function containsSecret(text: string, secrets: readonly (string | null | undefined)[]): boolean {
  return redact(text, secrets) !== text;
}
