import { ChatProviderError, definePlugin, type Plugin } from '@kosong/core';

import { GeminiChatProvider, type GeminiChatProviderOptions } from './gemini-chat-provider.js';

/** Environment variables, as `process.env` holds them. */
export type Environment = Readonly<Record<string, string | undefined>>;

/** The model of {@link geminiPlugin} when neither the options nor `GEMINI_MODEL` name one. */
export const DEFAULT_GEMINI_MODEL = 'gemini-2.5-flash';

/** Options of {@link geminiPlugin}: those of the provider, all optional, plus how to bind it. */
export interface GeminiPluginOptions extends Partial<GeminiChatProviderOptions> {
  /** Where the variables are read from; default `process.env`. */
  readonly env?: Environment;
  /** The name the provider is registered under; default `gemini`. */
  readonly providerName?: string;
  /** Whether it is the kernel's default provider; default `true`. */
  readonly default?: boolean;
}

/**
 * A kernel plugin (`provider:gemini`) that registers a {@link GeminiChatProvider} as the default
 * provider. Options not given come from the environment:
 *
 * - `apiKey` from `GEMINI_API_KEY`, else `GOOGLE_API_KEY`;
 * - `model` from `GEMINI_MODEL` (default `gemini-2.5-flash`); `baseURL` from `GEMINI_BASE_URL`;
 * - Vertex AI when `GOOGLE_GENAI_USE_VERTEXAI` is `true`: project and location from
 *   `GOOGLE_CLOUD_PROJECT` and `GOOGLE_CLOUD_LOCATION` (credentials from Application Default
 *   Credentials), or express mode with the API key.
 *
 * The provider is built at once, so configuration errors surface here.
 *
 * @throws {ChatProviderError} naming `GEMINI_API_KEY` when there is no key (and no Vertex AI project).
 * @example
 * await kernel.use(geminiPlugin());                              // from GEMINI_* variables
 * await kernel.use(geminiPlugin({ model: 'gemini-3-pro-preview', default: false }));
 */
export function geminiPlugin(options: GeminiPluginOptions = {}): Plugin {
  const { env = process.env, providerName = 'gemini', default: isDefault = true, ...provider } = options;
  const read = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  const apiKey = provider.apiKey ?? read('GEMINI_API_KEY') ?? read('GOOGLE_API_KEY');
  const baseURL = provider.baseURL ?? read('GEMINI_BASE_URL');
  const project = read('GOOGLE_CLOUD_PROJECT');
  const location = read('GOOGLE_CLOUD_LOCATION');
  const vertexAI =
    provider.vertexAI ??
    (read('GOOGLE_GENAI_USE_VERTEXAI')?.toLowerCase() === 'true'
      ? apiKey !== undefined
        ? true
        : { ...(project === undefined ? {} : { project }), ...(location === undefined ? {} : { location }) }
      : undefined);
  if (apiKey === undefined && (vertexAI === undefined || vertexAI === false)) {
    throw new ChatProviderError(
      'geminiPlugin: no API key. Set the GEMINI_API_KEY (or GOOGLE_API_KEY) environment variable, or pass the `apiKey` option ' +
        '(for Vertex AI: GOOGLE_GENAI_USE_VERTEXAI=true with GOOGLE_CLOUD_PROJECT)',
    );
  }
  const chatProvider = new GeminiChatProvider({
    ...provider,
    model: provider.model ?? read('GEMINI_MODEL') ?? DEFAULT_GEMINI_MODEL,
    ...(apiKey === undefined ? {} : { apiKey }),
    ...(baseURL === undefined ? {} : { baseURL }),
    ...(vertexAI === undefined ? {} : { vertexAI }),
  });
  return definePlugin({
    name: `provider:${providerName}`,
    setup: (context) => context.bindChatProvider(providerName, chatProvider, { default: isDefault }),
  });
}
