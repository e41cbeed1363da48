/**
 * `@kosong/provider-echo`: chat providers that need no network, for tests, demos and benchmarks.
 *
 * - {@link MockChatProvider}: streams a fixed list of parts;
 * - {@link EchoChatProvider}: streams what the last user message describes in the echo DSL ({@link parseEchoScript});
 * - {@link ScriptedEchoChatProvider}: plays a queue of echo DSL scripts, one per call;
 * - {@link ChaosChatProvider}: wraps any provider and injects faults, deterministically by seed.
 *
 * @packageDocumentation
 */
export { MockChatProvider, type MockChatProviderOptions } from './mock-chat-provider.js';
export { parseEchoScript, type EchoScript, type ParseEchoScriptOptions } from './echo-dsl.js';
export { ECHO_STEP_SEPARATOR, splitEchoSteps, type EchoScriptStep } from './echo-steps.js';
export { EchoScriptError, type ScriptLine } from './echo-script-error.js';
export { EchoChatProvider, type EchoChatProviderOptions } from './echo-chat-provider.js';
export { ScriptedEchoChatProvider, type ScriptedEchoChatProviderOptions } from './scripted-echo-chat-provider.js';
export type { EchoStreamOptions } from './echo-stream.js';
export { ChaosChatProvider } from './chaos-chat-provider.js';
export { CHAOS_FAULTS, chaosConfigFromEnv, type ChaosConfig, type ChaosFault, type ChaosFaultEvent } from './chaos-config.js';
export { RequestLog, DEFAULT_REQUEST_LOG_LIMIT, type RecordedRequest } from './request-log.js';
export { providerPlugins } from './provider-plugins.js';
export { mulberry32, type RandomSource } from './seeded-random.js';
