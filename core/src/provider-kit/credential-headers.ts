/** Header names that may carry a credential: `Authorization`, `x-api-key`, `api-key`, `x-auth-token`, `Cookie`, … */
const CREDENTIAL_HEADER = /key|auth|token|secret|cookie/i;

/**
 * The values of the headers that may carry a credential (by name: `key`, `auth`, `token`,
 * `secret`, `cookie`), for a provider's secrets: a key given in `defaultHeaders` (an Azure
 * `api-key`, a gateway's token) must be redacted from errors like the API key itself.
 */
export function credentialHeaderValues(headers: Readonly<Record<string, string>> | undefined): string[] {
  if (headers === undefined) return [];
  return Object.entries(headers)
    .filter(([name]) => CREDENTIAL_HEADER.test(name))
    .map(([, value]) => value);
}
