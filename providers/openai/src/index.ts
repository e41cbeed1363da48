/**
 * `@kosong/provider-openai`: chat providers on the official `openai` SDK.
 *
 * - {@link OpenAIChatProvider}: OpenAI Chat Completions and any compatible endpoint;
 * - {@link KimiChatProvider}: Kimi on the Moonshot AI API (reasoning, thinking switch, trace ids);
 * - {@link openAIPlugin} / {@link kimiPlugin}: kernel plugins configured from `OPENAI_*` / `KIMI_*`;
 * - {@link providerPlugins}: the `openai` and `kimi` entries the `kosong` CLI offers.
 *
 * A local Chat Completions server for tests is in `@kosong/provider-openai/testing`.
 *
 * @packageDocumentation
 */
export { OpenAIChatProvider, OPENAI_BASE_URL, type OpenAIChatProviderOptions } from './openai-chat-provider.js';
export { KimiChatProvider, KIMI_BASE_URL, type KimiChatProviderOptions } from './kimi-chat-provider.js';
export type { ConnectionOptions } from './chat-completions-connection.js';
export { ChatCompletionsStream } from './chat-completions-stream.js';
export type { ChatCompletionsGenerationOptions, GenerationOptions, MaxOutputTokensField } from './generation-options.js';
export { ensurePropertyTypes } from './ensure-property-types.js';
export { convertError, type ErrorConversionContext } from './convert-error.js';
export { thinkingEffortToReasoningEffort, reasoningEffortToThinkingEffort, type ReasoningEffort } from './reasoning-effort.js';
export { toolToOpenAI, toolToKimi, type FunctionToolDefinition, type BuiltinToolDefinition } from './request-tools.js';
export { openAIPlugin, DEFAULT_OPENAI_MODEL, type OpenAIPluginOptions } from './openai-plugin.js';
export { kimiPlugin, DEFAULT_KIMI_MODEL, type KimiPluginOptions } from './kimi-plugin.js';
export type { Environment } from './environment.js';
export { providerPlugins } from './provider-plugins.js';
