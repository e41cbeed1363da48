import { definePlugin, type Plugin } from '@kosong/core';

import { aiSdkProvider, type AiSdkProviderOptions } from './ai-sdk-provider.js';
import type { AiSdkLanguageModel } from './language-model.js';

/** Options of {@link aiSdkPlugin}: the model and its name, those of the provider, and how to bind it. */
export interface AiSdkPluginOptions extends Omit<AiSdkProviderOptions, 'name'> {
  /** The name the provider is registered under (`kernel.runner({ provider: name })`), and its `ChatProvider.name`. */
  readonly name: string;
  /** Any AI SDK language model (spec v2, v3 or v4), e.g. `mistral('mistral-large-latest')`. */
  readonly model: AiSdkLanguageModel;
  /** Whether it is the kernel's default provider; default: only if it is the first provider registered. */
  readonly default?: boolean;
}

/**
 * A kernel plugin (`provider:<name>`) that registers an AI SDK model as a chat provider, through
 * {@link aiSdkProvider}. Several can be used side by side (one per model).
 *
 * @throws {ChatProviderError} for what is not a language model of spec v2, v3 or v4.
 * @example
 * await kernel.use(aiSdkPlugin({ name: 'mistral', model: mistral('mistral-large-latest'), default: true }));
 * await kernel.use(aiSdkPlugin({ name: 'groq', model: groq('llama-3.3-70b-versatile') }));
 */
export function aiSdkPlugin(options: AiSdkPluginOptions): Plugin {
  const { name, model, default: isDefault, ...providerOptions } = options;
  const provider = aiSdkProvider(model, { ...providerOptions, name });
  return definePlugin({
    name: `provider:${name}`,
    setup: (context) => context.bindChatProvider(name, provider, isDefault === undefined ? {} : { default: isDefault }),
  });
}
