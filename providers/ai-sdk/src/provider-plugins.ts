import { ChatProviderError } from '@kosong/core/provider-kit';
import { definePlugin, type Plugin } from '@kosong/core';

import { aiSdkProvider } from './ai-sdk-provider.js';
import { loadAiSdkModel, parseModelSpec } from './model-loader.js';

/** The name of the provider of {@link providerPlugins} (`kosong --provider ai-sdk`). */
export const AI_SDK_PROVIDER_NAME = 'ai-sdk';

/** Options of {@link aiSdkEnvironmentPlugin}. */
export interface AiSdkEnvironmentPluginOptions {
  /** Where `AI_SDK_*` variables are read; default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Where the provider package is looked for first; default the working directory. */
  readonly cwd?: string;
}

/**
 * The kernel plugin (`provider:ai-sdk`) of a model named in the environment, as the `kosong` CLI
 * makes it for `--provider ai-sdk --model <package>:<model-id>`:
 *
 * - `AI_SDK_MODEL`: `<package>:<model-id>`, e.g. `@ai-sdk/mistral:mistral-large-latest` (`--model`);
 * - the package is loaded from the `node_modules` of the working directory (or a parent), else
 *   next to this package; when it is not installed, the error says how to install it;
 * - the key comes from the package's own variables (`MISTRAL_API_KEY`, `OPENAI_API_KEY`, …), read by
 *   the package; `AI_SDK_API_KEY` and `AI_SDK_BASE_URL`, when set, are given to its factory as
 *   `apiKey` and `baseURL` (`@ai-sdk/openai-compatible` needs `AI_SDK_BASE_URL`: an Ollama, vLLM or
 *   LM Studio server).
 *
 * The provider is the kernel's default one. The model is loaded when the plugin is used.
 *
 * @throws {ChatProviderError} without `AI_SDK_MODEL`, or for one that names no `<package>:<model-id>`.
 */
export function aiSdkEnvironmentPlugin(options: AiSdkEnvironmentPluginOptions = {}): Plugin {
  const env = options.env ?? process.env;
  const named = env['AI_SDK_MODEL']?.trim();
  if (named === undefined || named === '') {
    throw new ChatProviderError(`${AI_SDK_PROVIDER_NAME}: no model. Name one as <package>:<model-id> with --model (AI_SDK_MODEL), e.g. @ai-sdk/mistral:mistral-large-latest`);
  }
  const spec = parseModelSpec(named, AI_SDK_PROVIDER_NAME);
  const settings: Record<string, unknown> = {};
  const apiKey = env['AI_SDK_API_KEY']?.trim();
  const baseURL = env['AI_SDK_BASE_URL']?.trim();
  if (apiKey) settings['apiKey'] = apiKey;
  if (baseURL) settings['baseURL'] = baseURL;
  if (spec.packageName === '@ai-sdk/openai-compatible') settings['name'] = 'openai-compatible';
  return definePlugin({
    name: `provider:${AI_SDK_PROVIDER_NAME}`,
    async setup(context) {
      const model = await loadAiSdkModel(spec, { settings, name: AI_SDK_PROVIDER_NAME, ...(options.cwd === undefined ? {} : { cwd: options.cwd }) });
      context.bindChatProvider(AI_SDK_PROVIDER_NAME, aiSdkProvider(model, { name: AI_SDK_PROVIDER_NAME, env, ...(apiKey ? { secrets: [apiKey] } : {}) }), { default: true });
    },
  });
}

/** A provider programs such as the `kosong` CLI offer by name (the shape of core's `ProviderPluginFactory`). */
export interface ProviderPluginEntry {
  /** The name to select it by; also the name the provider is bound under. */
  readonly name: string;
  /** One line for a list of providers. */
  readonly description: string;
  /** The plugin that binds the provider (as the default provider), from the environment. */
  create(env: Readonly<Record<string, string | undefined>>): Plugin;
}

/**
 * The provider of this package that programs such as the `kosong` CLI offer by name
 * (`kosong --provider ai-sdk --model @ai-sdk/mistral:mistral-large-latest`), configured from the
 * environment (see {@link aiSdkEnvironmentPlugin}).
 */
export const providerPlugins: readonly ProviderPluginEntry[] = [
  {
    name: AI_SDK_PROVIDER_NAME,
    description:
      'any AI SDK provider package: --model <package>:<model-id>, e.g. @ai-sdk/mistral:mistral-large-latest (the package\'s own key variables, e.g. MISTRAL_API_KEY)',
    create: (env) => aiSdkEnvironmentPlugin({ env }),
  },
];
