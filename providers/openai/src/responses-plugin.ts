import { definePlugin, type Plugin } from '@kosong/core';

import { connectionFromEnvironment, type Environment } from './environment.js';
import { OpenAIResponsesChatProvider, type OpenAIResponsesChatProviderOptions } from './responses-chat-provider.js';

/** The model of {@link openaiResponsesPlugin} when neither the options nor `OPENAI_MODEL` name one. */
export const DEFAULT_OPENAI_RESPONSES_MODEL = 'gpt-5.1';

/** Options of {@link openaiResponsesPlugin}: those of the provider, all optional, plus how to bind it. */
export interface OpenAIResponsesPluginOptions extends Partial<OpenAIResponsesChatProviderOptions> {
  /** Where `OPENAI_*` variables are read from; default `process.env`. */
  readonly env?: Environment;
  /** The name the provider is registered under; default `openai-responses`. */
  readonly providerName?: string;
  /** Whether it is the kernel's default provider; default `true`. */
  readonly default?: boolean;
}

/**
 * A kernel plugin (`provider:openai-responses`) that registers an {@link OpenAIResponsesChatProvider}
 * as the default provider. Options not given come from the same environment variables as the
 * `openai` plugin's: `apiKey` from `OPENAI_API_KEY`, `baseURL` from `OPENAI_BASE_URL` (default
 * `https://api.openai.com/v1`), `model` from `OPENAI_MODEL` (default `gpt-5.1`). The provider is
 * built at once, so configuration errors surface here.
 *
 * @throws {ChatProviderError} naming `OPENAI_API_KEY` when there is no key (and no `client`).
 * @example
 * await kernel.use(openaiResponsesPlugin());                                 // from OPENAI_* variables
 * await kernel.use(openaiResponsesPlugin({ model: 'gpt-5.1-codex', strictTools: true }));
 */
export function openaiResponsesPlugin(options: OpenAIResponsesPluginOptions = {}): Plugin {
  const { env = process.env, providerName = 'openai-responses', default: isDefault = true, ...provider } = options;
  const chatProvider = new OpenAIResponsesChatProvider({
    ...provider,
    ...connectionFromEnvironment(provider, env, { name: 'openaiResponsesPlugin', prefix: 'OPENAI', defaultModel: DEFAULT_OPENAI_RESPONSES_MODEL }),
  });
  return definePlugin({
    name: `provider:${providerName}`,
    setup: (context) => context.bindChatProvider(providerName, chatProvider, { default: isDefault }),
  });
}
