/**
 * The AI SDK's errors as the kosong `ChatProviderError` family, on the provider kit's
 * `sdkErrorConverter`; and the secrets an AI SDK model holds, which the bridge cannot see directly
 * (the key is inside the model), found where they are.
 *
 * @module
 */
import {
  APIConnectionError,
  APITimeoutError,
  ChatProviderError,
  credentialHeaderValues,
  httpStatusError,
  sdkErrorConverter,
  transportFailureKind,
  type SdkErrorConverter,
  type SdkErrorFacts,
  type SecretPatterns,
  type Secrets,
} from '@kosong/core/provider-kit';

/**
 * API keys recognised by their form, whatever key the model was given: OpenAI, Anthropic and
 * DeepSeek (`sk-…`), Google (`AIza…`), Groq (`gsk_…`), xAI (`xai-…`). A key of another form is
 * redacted when it is one of the model's secrets (see {@link modelSecrets}).
 */
export const API_KEY_PATTERNS: SecretPatterns = Object.freeze([/\bsk-[A-Za-z0-9_-]{20,}/g, /\bAIza[0-9A-Za-z_-]{35}/g, /\bgsk_[A-Za-z0-9]{20,}/g, /\bxai-[A-Za-z0-9]{20,}/g]);

/** Names of environment variables that hold credentials: `OPENAI_API_KEY`, `AWS_SECRET_ACCESS_KEY`, `HF_TOKEN`, … */
const CREDENTIAL_VARIABLE = /(?:^|_)(?:API_?KEY|ACCESS_?KEY(?:_ID)?|SECRET(?:_ACCESS)?(?:_?KEY)?|TOKEN|PASSWORD|CREDENTIALS?|AUTH)$/i;

/** `Bearer <token>` and other schemes: the token alone is a secret too (a server may echo it without the scheme). */
const SCHEME = /^(?:Bearer|Basic|Token)\s+(\S+)$/i;

/** Is `error` an AI SDK error of this name (its marker, so that an error of another copy of the SDK counts too)? */
export function isAiSdkError(error: unknown, name: string): boolean {
  return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[Symbol.for(`vercel.ai.error.AI_${name}`)] === true;
}

/** What an `APICallError` carries. */
interface APICallErrorFields {
  readonly statusCode?: unknown;
  readonly responseHeaders?: unknown;
  readonly isRetryable?: unknown;
  readonly cause?: unknown;
}

/**
 * The converter of one bridge, named `provider` in its messages:
 *
 * - `APICallError` with a status → `APIStatusError` with the status, `x-request-id` (or
 *   `request-id`), `x-trace-id` and the wait of `retry-after-ms` / `retry-after`; a redirect that
 *   was not followed says where it led;
 * - `APICallError` without a status (the request did not get an answer): `APITimeoutError` for a
 *   timeout down its causes, else `APIConnectionError` when the SDK says it is retryable, else a
 *   plain `ChatProviderError`;
 * - `LoadAPIKeyError` → `ChatProviderError` `<provider>: no API key. Set the <VARIABLE> environment
 *   variable, or pass the \`apiKey\` option` (the variable the SDK named);
 * - `JSONParseError`, `TypeValidationError` → `ChatProviderError` saying the model's stream sent
 *   malformed data; `EmptyResponseBodyError` → `APIConnectionError`;
 * - what an `error` part of the stream carries that is no error of the SDK's (a provider's stream
 *   error: `{ message, type, statusCode?, isRetryable? }`) → `APIStatusError` with its status,
 *   `APIConnectionError` when retryable, else `ChatProviderError`;
 * - the rest as the kit maps it (transport failures, `AI SDK error: …`).
 *
 * Every message is redacted, and the original error (its request and response bodies and headers
 * included) is kept as `cause` with no secret reachable from it.
 */
export function aiSdkErrorConverter(provider: string): SdkErrorConverter {
  return sdkErrorConverter({
    fallbackPrefix: 'AI SDK error',
    patterns: API_KEY_PATTERNS,
    sdkError: (error, facts) => {
      if (isAiSdkError(error, 'APICallError')) return apiCallError(error as APICallErrorFields, facts);
      if (isAiSdkError(error, 'LoadAPIKeyError')) return missingKey(provider, facts);
      if (isAiSdkError(error, 'JSONParseError') || isAiSdkError(error, 'TypeValidationError')) {
        return new ChatProviderError(`The model's stream sent malformed data: ${facts.message}`, { cause: facts.cause });
      }
      if (isAiSdkError(error, 'EmptyResponseBodyError')) return new APIConnectionError(`The response has no body: ${facts.message}`, { cause: facts.cause });
      if (!(error instanceof Error) && typeof error === 'object' && error !== null) return streamError(error as Record<string, unknown>, facts);
      return undefined;
    },
  });
}

function apiCallError(error: APICallErrorFields, { message, cause, redact, withCauses }: SdkErrorFacts): ChatProviderError {
  if (typeof error.statusCode === 'number') {
    const headers = headersFrom(error.responseHeaders);
    return httpStatusError(error.statusCode, message, {
      headers,
      requestId: headers.get('x-request-id') ?? headers.get('request-id') ?? undefined,
      traceId: headers.get('x-trace-id') ?? undefined,
      cause,
      redact,
    });
  }
  if (transportFailureKind(error.cause) === 'timeout') return new APITimeoutError(withCauses(message, error.cause), { cause });
  if (error.isRetryable === true) return new APIConnectionError(withCauses(message, error.cause), { cause });
  return new ChatProviderError(`AI SDK error: ${message}`, { cause });
}

function missingKey(provider: string, { message, cause }: SdkErrorFacts): ChatProviderError {
  const variable = /\b([A-Z][A-Z0-9_]*)\s+environment variable/.exec(message)?.[1];
  const what = variable === undefined ? `no API key (${message})` : `no API key. Set the ${variable} environment variable, or pass the \`apiKey\` option`;
  return new ChatProviderError(`${provider}: ${what}`, { cause });
}

/** An `error` part's payload that is no `Error`: what a provider package reports of an error event. */
function streamError(error: Record<string, unknown>, { message, cause, redact }: SdkErrorFacts): ChatProviderError {
  const text = typeof error['message'] === 'string' ? redact(error['message']) : message;
  const kind = typeof error['type'] === 'string' ? ` (${redact(error['type'])})` : '';
  const said = `The model's stream sent an error${kind}: ${text}`;
  if (typeof error['statusCode'] === 'number') return httpStatusError(error['statusCode'], said, { cause, redact });
  if (error['isRetryable'] === true) return new APIConnectionError(said, { cause });
  return new ChatProviderError(said, { cause });
}

/** An `APICallError`'s response headers (a record) as `Headers`; broken values are left out. */
function headersFrom(value: unknown): Headers {
  const headers = new Headers();
  if (typeof value !== 'object' || value === null) return headers;
  for (const [name, item] of Object.entries(value)) {
    if (typeof item !== 'string') continue;
    try {
      headers.set(name, item);
    } catch {
      // not a valid header: not needed for the error
    }
  }
  return headers;
}

/**
 * The secrets a bridge keeps out of its errors besides those it was given: the values of the
 * credential-like headers the model sends (read from the `config.headers` the AI SDK's provider
 * packages give their models: the key they load, whatever its form), and the values of the
 * environment's credential variables (`*_API_KEY`, `*_TOKEN`, `*_SECRET*`, …: where the packages
 * read their keys from). Never throws: what cannot be read adds nothing.
 */
export async function modelSecrets(model: unknown, env: Readonly<Record<string, string | undefined>>): Promise<string[]> {
  const secrets = environmentSecrets(env);
  try {
    const config = (model as { config?: { headers?: unknown } } | null)?.config;
    const headers = typeof config?.headers === 'function' ? await (config.headers as () => unknown)() : await config?.headers;
    if (typeof headers === 'object' && headers !== null) {
      const defined = Object.fromEntries(Object.entries(headers).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
      for (const value of credentialHeaderValues(defined)) secrets.push(value, ...(SCHEME.exec(value)?.slice(1) ?? []));
    }
  } catch {
    // e.g. LoadAPIKeyError: there is no key to leak
  }
  return secrets;
}

/** The values of the environment's credential variables. */
export function environmentSecrets(env: Readonly<Record<string, string | undefined>>): string[] {
  const secrets: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && value.length >= 8 && !/\s/.test(value) && CREDENTIAL_VARIABLE.test(name)) secrets.push(value);
  }
  return secrets;
}

/** `secrets` and `more`, as one list of secrets. */
export function withSecrets(secrets: Secrets, more: readonly string[]): Secrets {
  return more.length === 0 ? secrets : [...secrets, ...more];
}
