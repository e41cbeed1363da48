import type { ProviderPluginFactory } from '@kosong/core';

import { kimiPlugin } from './kimi-plugin.js';
import { openAIPlugin } from './openai-plugin.js';
import { openaiResponsesPlugin } from './responses-plugin.js';

/**
 * The providers of this package that programs such as the `kosong` CLI offer by name
 * (`kosong --provider openai`, `kosong --provider openai-responses`, `kosong --provider kimi`),
 * configured from the environment.
 */
export const providerPlugins: readonly ProviderPluginFactory[] = [
  {
    name: 'openai',
    description: 'OpenAI Chat Completions or a compatible endpoint (OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL)',
    create: (env) => openAIPlugin({ env }),
  },
  {
    name: 'openai-responses',
    description: 'OpenAI Responses API, with reasoning (OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL)',
    create: (env) => openaiResponsesPlugin({ env }),
  },
  {
    name: 'kimi',
    description: 'Kimi on the Moonshot AI API (KIMI_API_KEY, KIMI_BASE_URL, KIMI_MODEL)',
    create: (env) => kimiPlugin({ env }),
  },
];
