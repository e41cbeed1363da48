/** OpenAIChatProvider in the provider conformance suite, over real HTTP to a local server. */
import { OpenAIChatProvider } from '@kosong/provider-openai';
import { conformanceSuite } from './conformance.js';
import { credentialLeakSuite } from './credential-leaks.js';
import { openAIFamilyAdapter } from './openai-family.js';

conformanceSuite(openAIFamilyAdapter('OpenAIChatProvider', false, (options) => new OpenAIChatProvider(options)));
credentialLeakSuite({ name: 'OpenAIChatProvider', create: (options) => new OpenAIChatProvider({ ...options, model: 'test-model' }) });
