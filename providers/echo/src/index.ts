/**
 * `@kosong/provider-echo`: chat providers that need no network, for tests, demos and benchmarks.
 *
 * @packageDocumentation
 */
export { MockChatProvider, type MockChatProviderOptions } from './mock-chat-provider.js';
