/**
 * `@kosong/provider-anthropic`: a chat provider for the Anthropic Messages API on the official
 * `@anthropic-ai/sdk`.
 *
 * - {@link AnthropicChatProvider}: streaming, prompt caching, thinking (adaptive or budgeted), tools;
 * - {@link anthropicPlugin}: a kernel plugin configured from `ANTHROPIC_*` variables;
 * - {@link providerPlugins}: the `anthropic` entry the `kosong` CLI offers.
 *
 * A local Messages API server for tests is in `@kosong/provider-anthropic/testing`.
 *
 * @packageDocumentation
 */
export { AnthropicChatProvider, DEFAULT_MAX_TOKENS, type AnthropicChatProviderOptions } from './anthropic-chat-provider.js';
export { ANTHROPIC_BASE_URL, type ConnectionOptions } from './messages-connection.js';
export { MessagesStream } from './messages-stream.js';
export type { CacheTTL } from './cache-control.js';
export { convertError, streamErrorEvent } from './convert-error.js';
export { clampEffort, supportsAdaptiveThinking, supportsEffortParameter, INTERLEAVED_THINKING_BETA } from './thinking.js';
export { redactedThinkPart, redactedThinkingData, REDACTED_THINKING_PREFIX } from './redacted-thinking.js';
export { normalizeStopReason } from './finish-reason.js';
export { anthropicPlugin, DEFAULT_ANTHROPIC_MODEL, type AnthropicPluginOptions, type Environment } from './anthropic-plugin.js';
export { providerPlugins } from './provider-plugins.js';
