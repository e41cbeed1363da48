import { definePlugin, type Plugin } from '@kosong/core';

import { connectionFromEnvironment, type Environment } from './environment.js';
import { OpenAIChatProvider, type OpenAIChatProviderOptions } from './openai-chat-provider.js';

/** The model of {@link openAIPlugin} when neither the options nor `OPENAI_MODEL` name one. */
export const DEFAULT_OPENAI_MODEL = 'gpt-4.1';

/** Options of {@link openAIPlugin}: those of the provider, all optional, plus how to bind it. */
export interface OpenAIPluginOptions extends Partial<OpenAIChatProviderOptions> {
  /** Where `OPENAI_*` variables are read from; default `process.env`. */
  readonly env?: Environment;
  /** The name the provider is registered under; default `openai`. */
  readonly providerName?: string;
  /** Whether it is the kernel's default provider; default `true`. */
  readonly default?: boolean;
}

/**
 * A kernel plugin (`provider:openai`) that registers an {@link OpenAIChatProvider} as the default
 * provider. Options not given come from the environment: `apiKey` from `OPENAI_API_KEY`, `baseURL`
 * from `OPENAI_BASE_URL` (default `https://api.openai.com/v1`), `model` from `OPENAI_MODEL` (default
 * `gpt-4.1`). The provider is built at once, so configuration errors surface here.
 *
 * @throws {ChatProviderError} naming `OPENAI_API_KEY` when there is no key (and no `client`).
 * @example
 * await kernel.use(openAIPlugin());                                  // from OPENAI_* variables
 * await kernel.use(openAIPlugin({ model: 'gpt-4.1-mini', generation: { temperature: 0 } }));
 */
export function openAIPlugin(options: OpenAIPluginOptions = {}): Plugin {
  const { env = process.env, providerName = 'openai', default: isDefault = true, ...provider } = options;
  const chatProvider = new OpenAIChatProvider({
    ...provider,
    ...connectionFromEnvironment(provider, env, { name: 'openAIPlugin', prefix: 'OPENAI', defaultModel: DEFAULT_OPENAI_MODEL }),
  });
  return definePlugin({
    name: `provider:${providerName}`,
    setup: (context) => context.bindChatProvider(providerName, chatProvider, { default: isDefault }),
  });
}
