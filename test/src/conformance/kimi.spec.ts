/** KimiChatProvider in the provider conformance suite, over real HTTP to a local server. */
import { KimiChatProvider } from '@kosong/provider-openai';
import { conformanceSuite } from './conformance.js';
import { openAIFamilyAdapter } from './openai-family.js';

conformanceSuite(openAIFamilyAdapter('KimiChatProvider', true, (options) => new KimiChatProvider(options)));
