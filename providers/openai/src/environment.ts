import { ChatProviderError } from '@kosong/core';

/** Environment variables, as `process.env` holds them. */
export type Environment = Readonly<Record<string, string | undefined>>;

/** The value of an environment variable, trimmed; `undefined` when unset or blank. */
export function readEnvironment(env: Environment, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

/** The error for a missing API key: it names the option and the variable (never a value). */
export function missingAPIKeyError(plugin: string, variable: string): ChatProviderError {
  return new ChatProviderError(`${plugin}: no API key. Set the ${variable} environment variable, or pass the \`apiKey\` option`);
}

/** What a provider plugin takes from its options or, where they are silent, from the environment. */
export interface Connection {
  readonly model: string;
  readonly apiKey?: string;
  readonly baseURL?: string;
}

/**
 * The model, API key and base URL of a plugin's provider: each from `options` when given, else from
 * `<PREFIX>_MODEL` / `<PREFIX>_API_KEY` / `<PREFIX>_BASE_URL`. With a `client`, key and base URL are
 * the client's own.
 *
 * @throws {ChatProviderError} naming `<PREFIX>_API_KEY` when there is no key and no client.
 */
export function connectionFromEnvironment(
  options: { readonly apiKey?: string; readonly baseURL?: string; readonly model?: string; readonly client?: unknown },
  env: Environment,
  plugin: { readonly name: string; readonly prefix: string; readonly defaultModel: string },
): Connection {
  const model = options.model ?? readEnvironment(env, `${plugin.prefix}_MODEL`) ?? plugin.defaultModel;
  if (options.client !== undefined) return { model };
  const apiKey = options.apiKey ?? readEnvironment(env, `${plugin.prefix}_API_KEY`);
  if (apiKey === undefined) throw missingAPIKeyError(plugin.name, `${plugin.prefix}_API_KEY`);
  const baseURL = options.baseURL ?? readEnvironment(env, `${plugin.prefix}_BASE_URL`);
  return baseURL === undefined ? { model, apiKey } : { model, apiKey, baseURL };
}
