/**
 * `aiSdkProvider` in the provider conformance suite, once per AI SDK provider package, each over
 * real HTTP to the local server of its API (see `ai-sdk-adapters.ts`); and the credential checks.
 */
import { anthropicAdapter, bridge, chatCompletionsAdapter, googleAdapter, PACKAGES } from './ai-sdk-adapters.js';
import { conformanceSuite } from './conformance.js';
import { credentialLeakSuite } from './credential-leaks.js';

conformanceSuite(chatCompletionsAdapter('@ai-sdk/openai'));
conformanceSuite(chatCompletionsAdapter('@ai-sdk/openai-compatible'));
conformanceSuite(anthropicAdapter());
conformanceSuite(googleAdapter());

for (const pkg of Object.keys(PACKAGES) as (keyof typeof PACKAGES)[]) {
  credentialLeakSuite({ name: `aiSdkProvider(${pkg})`, create: (endpoint) => bridge(pkg, endpoint, 'test-model') });
}
