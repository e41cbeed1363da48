import { definePlugin, type Plugin } from '@kosong/core';

import { connectionFromEnvironment, type Environment } from './environment.js';
import { KimiChatProvider, type KimiChatProviderOptions } from './kimi-chat-provider.js';

/** The model of {@link kimiPlugin} when neither the options nor `KIMI_MODEL` name one. */
export const DEFAULT_KIMI_MODEL = 'kimi-k2-turbo-preview';

/** Options of {@link kimiPlugin}: those of the provider, all optional, plus how to bind it. */
export interface KimiPluginOptions extends Partial<KimiChatProviderOptions> {
  /** Where `KIMI_*` variables are read from; default `process.env`. */
  readonly env?: Environment;
  /** The name the provider is registered under; default `kimi`. */
  readonly providerName?: string;
  /** Whether it is the kernel's default provider; default `true`. */
  readonly default?: boolean;
}

/**
 * A kernel plugin (`provider:kimi`) that registers a {@link KimiChatProvider} as the default
 * provider. Options not given come from the environment: `apiKey` from `KIMI_API_KEY`, `baseURL`
 * from `KIMI_BASE_URL` (default `https://api.moonshot.ai/v1`), `model` from `KIMI_MODEL` (default
 * `kimi-k2-turbo-preview`). The provider is built at once, so configuration errors surface here.
 *
 * @throws {ChatProviderError} naming `KIMI_API_KEY` when there is no key (and no `client`).
 * @example
 * await kernel.use(kimiPlugin());                                    // from KIMI_* variables
 */
export function kimiPlugin(options: KimiPluginOptions = {}): Plugin {
  const { env = process.env, providerName = 'kimi', default: isDefault = true, ...provider } = options;
  const chatProvider = new KimiChatProvider({
    ...provider,
    ...connectionFromEnvironment(provider, env, { name: 'kimiPlugin', prefix: 'KIMI', defaultModel: DEFAULT_KIMI_MODEL }),
  });
  return definePlugin({
    name: `provider:${providerName}`,
    setup: (context) => context.bindChatProvider(providerName, chatProvider, { default: isDefault }),
  });
}
