import { ChatProviderError, definePlugin, type Plugin } from '@kosong/core';

import { AnthropicChatProvider, type AnthropicChatProviderOptions } from './anthropic-chat-provider.js';

/** The model of {@link anthropicPlugin} when neither the options nor `ANTHROPIC_MODEL` name one. */
export const DEFAULT_ANTHROPIC_MODEL = 'claude-sonnet-4-6';

/** Environment variables, as `process.env` holds them. */
export type Environment = Readonly<Record<string, string | undefined>>;

/** Options of {@link anthropicPlugin}: those of the provider, all optional, plus how to bind it. */
export interface AnthropicPluginOptions extends Partial<AnthropicChatProviderOptions> {
  /** Where `ANTHROPIC_*` variables are read from; default `process.env`. */
  readonly env?: Environment;
  /** The name the provider is registered under; default `anthropic`. */
  readonly providerName?: string;
  /** Whether it is the kernel's default provider; default `true`. */
  readonly default?: boolean;
}

/**
 * A kernel plugin (`provider:anthropic`) that registers an {@link AnthropicChatProvider} as the
 * default provider. Options not given come from the environment: `apiKey` from `ANTHROPIC_API_KEY`,
 * `baseURL` from `ANTHROPIC_BASE_URL` (default `https://api.anthropic.com`), `model` from
 * `ANTHROPIC_MODEL` (default `claude-sonnet-4-6`). Blank variables count as unset. The provider is
 * built at once, so configuration errors surface here.
 *
 * @throws {ChatProviderError} naming `ANTHROPIC_API_KEY` when there is no key (and no `client`).
 * @example
 * await kernel.use(anthropicPlugin());                                     // from ANTHROPIC_* variables
 * await kernel.use(anthropicPlugin({ model: 'claude-opus-4-7', promptCache: { ttl: '1h' } }));
 */
export function anthropicPlugin(options: AnthropicPluginOptions = {}): Plugin {
  const { env = process.env, providerName = 'anthropic', default: isDefault = true, ...provider } = options;
  const read = (name: string): string | undefined => env[name]?.trim() || undefined;
  const model = provider.model ?? read('ANTHROPIC_MODEL') ?? DEFAULT_ANTHROPIC_MODEL;
  let connection: Partial<AnthropicChatProviderOptions> = {};
  if (provider.client === undefined) {
    const apiKey = provider.apiKey ?? read('ANTHROPIC_API_KEY');
    if (apiKey === undefined) {
      throw new ChatProviderError('anthropicPlugin: no API key. Set the ANTHROPIC_API_KEY environment variable, or pass the `apiKey` option');
    }
    const baseURL = provider.baseURL ?? read('ANTHROPIC_BASE_URL');
    connection = baseURL === undefined ? { apiKey } : { apiKey, baseURL };
  }
  const chatProvider = new AnthropicChatProvider({ ...provider, ...connection, model });
  return definePlugin({
    name: `provider:${providerName}`,
    setup: (context) => context.bindChatProvider(providerName, chatProvider, { default: isDefault }),
  });
}
