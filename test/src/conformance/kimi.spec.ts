/** KimiChatProvider in the provider conformance suite, over real HTTP to a local server. */
import { KimiChatProvider } from '@kosong/provider-openai';
import { conformanceSuite } from './conformance.js';
import { credentialLeakSuite } from './credential-leaks.js';
import { openAIFamilyAdapter } from './openai-family.js';

conformanceSuite(openAIFamilyAdapter('KimiChatProvider', true, (options) => new KimiChatProvider(options)));
credentialLeakSuite({ name: 'KimiChatProvider', create: (options) => new KimiChatProvider({ ...options, model: 'test-model' }) });
