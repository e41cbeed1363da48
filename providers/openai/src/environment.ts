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
