/**
 * What a provider on an official SDK takes to reach its API, and the checks every such provider
 * makes of it; and the start of a body that is not what was expected, for an error message.
 *
 * @module
 */

import { ChatProviderError } from '../provider/errors.js';

/**
 * How a provider reaches its API through an SDK client: either a client of the SDK, used as it is
 * configured, or what to make one with (a key, a base URL, …). A provider's options interface
 * extends it with the SDK's types (and says how its API sends the key).
 *
 * @typeParam Client - the SDK's client class.
 * @typeParam Fetch - the `fetch` type the SDK takes.
 * @typeParam LogLevel - the SDK's log levels.
 * @typeParam Logger - the SDK's logger type.
 */
export interface SdkConnectionOptions<Client, Fetch = typeof fetch, LogLevel = string, Logger = unknown> {
  /** The API key. Required unless `client` is given. */
  readonly apiKey?: string;
  /** The API base URL (the provider's default when left out; the environment is not read). */
  readonly baseURL?: string;
  /** Headers sent with every request (those whose names say they carry a credential are redacted from errors, see `credentialHeaderValues`). */
  readonly defaultHeaders?: Readonly<Record<string, string>>;
  /** A `fetch` to use instead of the global one (a proxy, a recorder, …). */
  readonly fetch?: Fetch;
  /**
   * How long to wait for the response to start, and then for each next chunk of the stream, in ms.
   * Default: the client's timeout.
   */
  readonly timeoutMs?: number;
  /**
   * Retries of the SDK itself. Default 0: kosong's agent loop retries failed steps (with backoff and
   * `retry-after`), and SDK retries below it would multiply the attempts. Applies to a given `client` too.
   */
  readonly maxRetries?: number;
  /**
   * A client of the SDK to use as it is configured (base URL, key, fetch, …). Mutually exclusive
   * with `apiKey`, `baseURL`, `defaultHeaders`, `fetch`, `logLevel` and `logger`.
   */
  readonly client?: Client;
  /** The SDK's log level. Default `off`: the provider reports every failure as an error. */
  readonly logLevel?: LogLevel;
  /** The SDK's logger (the SDK's default when left out). */
  readonly logger?: Logger;
}

/** The options that make a client, which a given `client` excludes. */
const CLIENT_EXCLUSIVE = ['apiKey', 'baseURL', 'defaultHeaders', 'fetch', 'logLevel', 'logger'] as const;

/**
 * Checks what an SDK-based provider was given: a `client` and none of the options that make one,
 * or an API key. Returns the client when one was given.
 *
 * @param provider the provider's class name, for the error (`OpenAIChatProvider`).
 * @param sdk the SDK's name, for the error (`OpenAI`: "… or an OpenAI `client`").
 * @throws {ChatProviderError} for a client with such options, or neither a client nor a key.
 */
export function clientOf<Client>(options: SdkConnectionOptions<Client, unknown, unknown, unknown>, provider: string, sdk: string): Client | undefined {
  if (options.client !== undefined) {
    const mixed = CLIENT_EXCLUSIVE.filter((key) => options[key] !== undefined);
    if (mixed.length > 0) throw new ChatProviderError(`${provider}: pass either \`client\` or ${mixed.map((key) => `\`${key}\``).join(', ')}, not both`);
    return options.client;
  }
  if (options.apiKey === undefined || options.apiKey === '') throw new ChatProviderError(`${provider} needs an \`apiKey\` (or an ${sdk} \`client\`)`);
  return undefined;
}

/** What {@link readBodyStart} read. */
export interface BodyStart {
  /** The first bytes, as UTF-8 text. */
  readonly text: string;
  /** Whether the body had more. */
  readonly more: boolean;
}

/**
 * The first `maxBytes` of a body (an error page, a body that is no event stream), for an error
 * message; the rest is not read (the body is cancelled). A read that fails, or takes longer than
 * `timeoutMs` in all, ends it with what arrived.
 */
export async function readBodyStart(body: ReadableStream<Uint8Array> | null | undefined, maxBytes: number, timeoutMs?: number): Promise<BodyStart> {
  const reader = body?.getReader();
  if (reader === undefined) return { text: '', more: false };
  const chunks: Uint8Array[] = [];
  let size = 0;
  const timer = timeoutMs === undefined ? undefined : setTimeout(() => void reader.cancel().catch(() => undefined), timeoutMs);
  timer?.unref();
  try {
    while (size < maxBytes) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } catch {
    // what arrived is enough
  } finally {
    clearTimeout(timer);
    await reader.cancel().catch(() => undefined);
  }
  return { text: Buffer.concat(chunks).toString('utf8', 0, Math.min(size, maxBytes)), more: size > maxBytes };
}
