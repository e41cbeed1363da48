import { redactSecrets, type SecretPatterns } from '@kosong/core/provider-kit';

/**
 * Google credentials recognised by their form, whatever key was configured: API keys (`AIza` + 35
 * characters) and OAuth access tokens (`ya29.…`, Vertex AI with Application Default Credentials).
 */
export const GOOGLE_CREDENTIALS: SecretPatterns = [/\bAIza[0-9A-Za-z_-]{35}\b/g, /\bya29\.[0-9A-Za-z._-]{10,}/g];

/**
 * `text` with the secrets redacted by core's `redactSecrets` (as they are, URL-encoded and
 * JSON-escaped, and `Bearer` credentials), and anything that looks like a Google API key or a
 * Google access token as well.
 */
export function redact(text: string, secrets: readonly (string | undefined)[]): string {
  return redactSecrets(text, secrets, GOOGLE_CREDENTIALS);
}
