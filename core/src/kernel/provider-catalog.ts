import type { Plugin } from './plugin.js';

/**
 * A provider a program (such as the `kosong` CLI) can offer by name, without knowing it in advance:
 * provider packages export a list of these as `providerPlugins`. `create` builds the kernel plugin
 * from the environment (API keys, base URLs) and throws a clear error naming the missing variable.
 */
export interface ProviderPluginFactory {
  /** The name to select it by, e.g. `openai`. It is also the name the provider is bound under. */
  readonly name: string;
  /** One line for a list of providers. */
  readonly description: string;
  /** The plugin that binds the provider (as the default provider). */
  create(env: Readonly<Record<string, string | undefined>>): Plugin;
}
