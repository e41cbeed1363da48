import type { ProviderPluginFactory } from '@kosong/core';

import { anthropicPlugin } from './anthropic-plugin.js';

/**
 * The provider of this package that programs such as the `kosong` CLI offer by name
 * (`kosong --provider anthropic`), configured from the environment.
 */
export const providerPlugins: readonly ProviderPluginFactory[] = [
  {
    name: 'anthropic',
    description: 'Anthropic Messages API (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, ANTHROPIC_MODEL)',
    create: (env) => anthropicPlugin({ env }),
  },
];
