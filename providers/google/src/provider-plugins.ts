import type { ProviderPluginFactory } from '@kosong/core';

import { geminiPlugin } from './gemini-plugin.js';

/**
 * The providers of this package that programs such as the `kosong` CLI offer by name
 * (`kosong --provider gemini`), configured from the environment.
 */
export const providerPlugins: readonly ProviderPluginFactory[] = [
  {
    name: 'gemini',
    description: 'Google Gemini API or Vertex AI (GEMINI_API_KEY or GOOGLE_API_KEY, GEMINI_BASE_URL, GEMINI_MODEL; GOOGLE_GENAI_USE_VERTEXAI)',
    create: (env) => geminiPlugin({ env }),
  },
];
