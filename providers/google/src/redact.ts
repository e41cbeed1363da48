import { redactSecrets } from '@kosong/core';

/** Google API keys (`AIza` + 35 characters), whatever key was configured. */
const GOOGLE_API_KEY = /\bAIza[0-9A-Za-z_-]{35}\b/g;
/** OAuth access tokens of Google (Vertex AI with Application Default Credentials). */
const GOOGLE_ACCESS_TOKEN = /\bya29\.[0-9A-Za-z._-]{10,}/g;

/**
 * `text` with the secrets redacted by core's `redactSecrets` (as they are, URL-encoded and
 * JSON-escaped, and `Bearer` credentials), and anything that looks like a Google API key or a
 * Google access token as well.
 */
export function redact(text: string, secrets: readonly (string | undefined)[]): string {
  return redactSecrets(text, secrets).replace(GOOGLE_API_KEY, '[REDACTED]').replace(GOOGLE_ACCESS_TOKEN, '[REDACTED]');
}

/** Whether {@link redact} would change `text`. */
export function containsSecret(text: string, secrets: readonly (string | undefined)[]): boolean {
  return redact(text, secrets) !== text;
}
