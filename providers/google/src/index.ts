/**
 * `@kosong/provider-google`: Google Gemini for kosong, on the official `@google/genai` SDK.
 *
 * - {@link GeminiChatProvider}: the Gemini API or Vertex AI, streamed, with thinking, parallel
 *   function calls and their thought signatures, images and audio;
 * - {@link geminiPlugin}: a kernel plugin configured from `GEMINI_*` / `GOOGLE_*` variables;
 * - {@link providerPlugins}: the `gemini` entry the `kosong` CLI offers.
 *
 * A local Gemini server for tests is in `@kosong/provider-google/testing`.
 *
 * @packageDocumentation
 */
export { GeminiChatProvider, type GeminiChatProviderOptions, type GeminiRequestConfig } from './gemini-chat-provider.js';
export { GEMINI_BASE_URL, DEFAULT_TIMEOUT_MS, type GeminiConnectionOptions, type VertexAIOptions } from './gemini-connection.js';
export { GeminiStream, MAX_EVENT_CHARS } from './gemini-stream.js';
export { DEFAULT_MAX_MEDIA_BYTES, DEFAULT_MEDIA_TIMEOUT_MS, type MediaOptions } from './media-resolver.js';
export { toolsToGemini, type FunctionDeclaration } from './request-tools.js';
export { thinkingConfigFor, thinkingEffortOf, usesThinkingLevel, type ThinkingConfig } from './thinking-config.js';
export { THOUGHT_SIGNATURE_KEY, SKIP_THOUGHT_SIGNATURE } from './thought-signature.js';
export { usageFromMetadata } from './usage.js';
export { normalizeFinishReason } from './finish-reason.js';
export { geminiPlugin, DEFAULT_GEMINI_MODEL, type GeminiPluginOptions, type Environment } from './gemini-plugin.js';
export { providerPlugins } from './provider-plugins.js';
