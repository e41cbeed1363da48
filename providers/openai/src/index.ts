/**
 * `@kosong/provider-openai`: chat providers on the official `openai` SDK.
 *
 * - {@link OpenAIChatProvider}: OpenAI Chat Completions and any compatible endpoint;
 * - {@link OpenAIResponsesChatProvider}: the OpenAI Responses API (encrypted reasoning round-tripped);
 * - {@link KimiChatProvider}: Kimi on the Moonshot AI API (reasoning, thinking switch, trace ids);
 * - {@link openAIPlugin} / {@link openaiResponsesPlugin} / {@link kimiPlugin}: kernel plugins
 *   configured from `OPENAI_*` / `KIMI_*`;
 * - {@link providerPlugins}: the `openai`, `openai-responses` and `kimi` entries the `kosong` CLI offers.
 *
 * Local Chat Completions and Responses servers for tests are in `@kosong/provider-openai/testing`.
 *
 * @packageDocumentation
 */
export { OpenAIChatProvider, OPENAI_BASE_URL, type OpenAIChatProviderOptions } from './openai-chat-provider.js';
export { KimiChatProvider, KIMI_BASE_URL, type KimiChatProviderOptions } from './kimi-chat-provider.js';
export { OpenAIResponsesChatProvider, type OpenAIResponsesChatProviderOptions } from './responses-chat-provider.js';
export type { ResponsesGenerationOptions } from './responses-generation.js';
export { convertInput, type ResponsesInputConversion, type ResponsesInputItem } from './responses-input.js';
export { ResponsesEventConverter } from './responses-event-converter.js';
export { toolToResponses, type ResponsesFunctionTool } from './responses-tools.js';
export { systemRoleFor } from './responses-system-role.js';
export { openaiResponsesPlugin, DEFAULT_OPENAI_RESPONSES_MODEL, type OpenAIResponsesPluginOptions } from './responses-plugin.js';
export { CHAT_COMPLETIONS_ENDPOINT, type StreamConverter, type StreamingEndpoint, type StreamingRequestOptions } from './streaming-endpoint.js';
export { RESPONSES_ENDPOINT } from './responses-endpoint.js';
export type { ConnectionOptions } from './chat-completions-connection.js';
export { ChatCompletionsStream } from './chat-completions-stream.js';
export type { ChatCompletionsGenerationOptions, GenerationOptions, MaxOutputTokensField } from './generation-options.js';
export { ensurePropertyTypes } from './ensure-property-types.js';
export { convertError, type ErrorConversionContext } from './convert-error.js';
export { OpenAIStreamError } from './stream-error.js';
export { thinkingEffortToReasoningEffort, reasoningEffortToThinkingEffort, type ReasoningEffort } from './reasoning-effort.js';
export { toolToOpenAI, toolToKimi, type FunctionToolDefinition, type BuiltinToolDefinition } from './request-tools.js';
export { openAIPlugin, DEFAULT_OPENAI_MODEL, type OpenAIPluginOptions } from './openai-plugin.js';
export { kimiPlugin, DEFAULT_KIMI_MODEL, type KimiPluginOptions } from './kimi-plugin.js';
export type { Environment } from './environment.js';
export { providerPlugins } from './provider-plugins.js';
